import { mkdir, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { FreeLoaderError, type UserView } from '@freeloader/protocol';
import { randomSecret } from './db/stored-secrets.js';
import { createUsersRepo, type NewUser } from './repositories/users.js';

/**
 * Create a console/CLI user (role `scientist` unless given). Takes the app or a bare pool, so
 * scripts can add users without starting a server.
 *
 * @example await createUser(app, { username: 'ada', password: 's3cret', role: 'admin' })
 */
export async function createUser(
  target: FastifyInstance | pg.Pool,
  user: NewUser,
): Promise<UserView> {
  const pool = 'usersRepo' in target ? null : target;
  const repo = pool ? createUsersRepo(pool) : (target as FastifyInstance).usersRepo;
  return repo.create(user);
}

/** Where the first admin's password is written (mode 0600) for local CLI use. */
export function adminPasswordFile(home: string): string {
  return join(home, 'manager', 'admin-password');
}

/**
 * At first start (no users at all) create `admin` with a random password, write it to
 * `$FREELOADER_HOME/manager/admin-password` (0600) and return it; null on every later start.
 */
export async function ensureFirstAdmin(app: FastifyInstance): Promise<string | null> {
  if ((await app.usersRepo.count()) > 0) return null;
  const password = randomSecret(18);
  try {
    await app.usersRepo.create({ username: 'admin', password, role: 'admin' });
  } catch (e) {
    // Another manager on the same database won the race: it owns the password.
    if (e instanceof FreeLoaderError && e.code === 'ALREADY_EXISTS') return null;
    throw e;
  }
  const file = adminPasswordFile(app.config.home);
  await mkdir(join(app.config.home, 'manager'), { recursive: true, mode: 0o700 });
  await writeFile(file, password + '\n', { mode: 0o600 });
  await chmod(file, 0o600);
  return password;
}
