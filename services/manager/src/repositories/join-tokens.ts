import fp from 'fastify-plugin';
import {
  FreeLoaderError,
  JOIN_TOKEN_TTL_S,
  parseJoinToken,
  type JoinTokenCreate,
  type JoinTokenCreated,
  type JoinTokenView,
} from '@freeloader/protocol';
import { randomSecret, sha256 } from '../db/stored-secrets.js';
import type { Queryable } from '../db/pool.js';
import { iso } from './rows.js';

interface TokenRow {
  id: string;
  note: string | null;
  max_uses: number;
  uses: number;
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Date;
}

const COLUMNS = 'id, note, max_uses, uses, expires_at, revoked_at, created_at';

const toView = (r: TokenRow): JoinTokenView => ({
  id: r.id,
  note: r.note,
  maxUses: r.max_uses,
  uses: r.uses,
  expiresAt: iso(r.expires_at),
  revoked: r.revoked_at !== null,
  createdAt: iso(r.created_at),
});

/**
 * SQL spending one use of the join token whose SHA-256 is `$1`, for a `WITH spent AS (...)`:
 * one row (its id) when the token is known, unrevoked, unexpired and has a use left, else none.
 * Racing enrollments cannot overspend it: an UPDATE that waited for another's row lock checks
 * `uses < max_uses` again on the row that one committed.
 */
export const SPEND_JOIN_TOKEN = `UPDATE join_tokens SET uses = uses + 1
  WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now() AND uses < max_uses
  RETURNING id`;

/** The digest a join token is stored under (of a whole token, secret::fingerprint, its secret). */
export function joinTokenHash(token: string): Buffer {
  return sha256(parseJoinToken(token).secret);
}

/**
 * Why {@link SPEND_JOIN_TOKEN} spent nothing: JOIN_TOKEN_INVALID (unknown or revoked),
 * JOIN_TOKEN_EXPIRED or JOIN_TOKEN_USED. Asked only after a refusal, so enrollment itself is
 * one statement.
 */
export async function joinTokenRefusal(db: Queryable, tokenHash: Buffer): Promise<FreeLoaderError> {
  const { rows } = await db.query<{ revoked: boolean; expired: boolean }>(
    `SELECT revoked_at IS NOT NULL AS revoked, expires_at <= now() AS expired
     FROM join_tokens WHERE token_hash = $1`,
    [tokenHash],
  );
  const row = rows[0];
  if (!row || row.revoked) {
    return new FreeLoaderError('JOIN_TOKEN_INVALID', 'unknown or revoked join token');
  }
  if (row.expired) return new FreeLoaderError('JOIN_TOKEN_EXPIRED', 'join token has expired');
  return new FreeLoaderError('JOIN_TOKEN_USED', 'join token has no uses left');
}

/** Join tokens: admins mint them, agents spend them to enroll. Only SHA-256 is stored. */
export function createJoinTokensRepo(db: Queryable) {
  return {
    /** Mint a token; the secret is in the result and nowhere else. */
    async create(input: JoinTokenCreate, createdBy: string | null): Promise<JoinTokenCreated> {
      const token = randomSecret(32, 'flj_');
      const { rows } = await db.query<TokenRow>(
        `INSERT INTO join_tokens (token_hash, note, max_uses, expires_at, created_by)
         VALUES ($1, $2, $3, now() + make_interval(secs => $4), $5) RETURNING ${COLUMNS}`,
        [
          sha256(token),
          input.note ?? null,
          input.maxUses ?? 1,
          input.ttlSeconds ?? JOIN_TOKEN_TTL_S,
          createdBy,
        ],
      );
      return { ...toView(rows[0]!), token };
    },

    async list(): Promise<JoinTokenView[]> {
      const { rows } = await db.query<TokenRow>(
        `SELECT ${COLUMNS} FROM join_tokens ORDER BY created_at DESC`,
      );
      return rows.map(toView);
    },

    /** Revoke a token; false when there is no such token. */
    async revoke(id: string): Promise<boolean> {
      const { rowCount } = await db.query(
        'UPDATE join_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1',
        [id],
      );
      return rowCount === 1;
    },
  };
}
export type JoinTokensRepo = ReturnType<typeof createJoinTokensRepo>;

declare module 'fastify' {
  interface FastifyInstance {
    joinTokensRepo: JoinTokensRepo;
  }
}

export default fp(
  async (app) => {
    app.decorate('joinTokensRepo', createJoinTokensRepo(app.pg));
  },
  { name: 'join-tokens-repo', dependencies: ['postgres'] },
);
