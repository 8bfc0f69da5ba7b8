import fp from 'fastify-plugin';
import { FreeLoaderError, SESSION_TTL_S, type Role, type UserView } from '@freeloader/protocol';
import { hashPassword, randomSecret, sha256 } from '../db/stored-secrets.js';
import type { Queryable } from '../db/pool.js';
import { isPgError, UNIQUE_VIOLATION } from './rows.js';

export interface NewUser {
  username: string;
  password: string;
  role?: Role;
}

export interface UserWithHash extends UserView {
  passwordHash: string;
}

export interface Session {
  token: string;
  expiresAt: Date;
}

interface UserRow {
  id: string;
  username: string;
  role: Role;
  password_hash: string;
}

const toView = (r: UserRow): UserView => ({ id: r.id, username: r.username, role: r.role });

/**
 * Users and their sessions. Passwords are scrypt hashes; session tokens are stored as SHA-256,
 * so the table alone cannot be replayed.
 */
export function createUsersRepo(db: Queryable) {
  return {
    /** Create a user; ALREADY_EXISTS when the name is taken. */
    async create(input: NewUser): Promise<UserView> {
      const hash = await hashPassword(input.password);
      try {
        const { rows } = await db.query<UserRow>(
          `INSERT INTO users (username, password_hash, role) VALUES ($1, $2, $3)
           RETURNING id, username, role, password_hash`,
          [input.username, hash, input.role ?? 'scientist'],
        );
        return toView(rows[0]!);
      } catch (e) {
        if (isPgError(e, UNIQUE_VIOLATION)) {
          throw new FreeLoaderError('ALREADY_EXISTS', `user "${input.username}" already exists`);
        }
        throw e;
      }
    },

    /** Every user, by name (never their hashes). */
    async list(): Promise<UserView[]> {
      const { rows } = await db.query<UserRow>(
        'SELECT id, username, role, password_hash FROM users ORDER BY username',
      );
      return rows.map(toView);
    },

    async count(): Promise<number> {
      const { rows } = await db.query<{ n: number }>('SELECT count(*) AS n FROM users');
      return rows[0]!.n;
    },

    async findByUsername(username: string): Promise<UserWithHash | null> {
      const { rows } = await db.query<UserRow>(
        'SELECT id, username, role, password_hash FROM users WHERE username = $1',
        [username],
      );
      const r = rows[0];
      return r ? { ...toView(r), passwordHash: r.password_hash } : null;
    },

    /** Open a session; expired sessions of the same user are swept on the way. */
    async createSession(userId: string, ttlSeconds = SESSION_TTL_S): Promise<Session> {
      const token = randomSecret(32, 'fls_');
      await db.query('DELETE FROM sessions WHERE user_id = $1 AND expires_at <= now()', [userId]);
      const { rows } = await db.query<{ expires_at: Date }>(
        `INSERT INTO sessions (token_hash, user_id, expires_at)
         VALUES ($1, $2, now() + make_interval(secs => $3)) RETURNING expires_at`,
        [sha256(token), userId, ttlSeconds],
      );
      return { token, expiresAt: rows[0]!.expires_at };
    },

    /** The user behind an unexpired session token, or null. */
    async userForSession(token: string): Promise<UserView | null> {
      const { rows } = await db.query<UserRow>(
        `SELECT u.id, u.username, u.role, u.password_hash FROM sessions s
         JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1 AND s.expires_at > now()`,
        [sha256(token)],
      );
      return rows[0] ? toView(rows[0]) : null;
    },

    async deleteSession(token: string): Promise<void> {
      await db.query('DELETE FROM sessions WHERE token_hash = $1', [sha256(token)]);
    },
  };
}
export type UsersRepo = ReturnType<typeof createUsersRepo>;

declare module 'fastify' {
  interface FastifyInstance {
    usersRepo: UsersRepo;
  }
}

export default fp(
  async (app) => {
    app.decorate('usersRepo', createUsersRepo(app.pg));
  },
  { name: 'users-repo', dependencies: ['postgres'] },
);
