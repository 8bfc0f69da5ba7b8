import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readlink, stat, symlink } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { FreeLoaderError } from '@freeloader/protocol';

/** Where a root-run manager keeps PostgreSQL data that the `postgres` user could not reach. */
export const RELOCATED_PGDATA_ROOT = '/var/lib/freeloader';

/**
 * The directory PostgreSQL should use for `dataDir` when we run as root and the server runs as
 * the `postgres` user, which needs search permission on every directory above its data.
 *
 * Directories under `ownedRoot` (FREELOADER_HOME) get search (x, not read) for others. When a
 * directory above them is closed (e.g. /root, mode 0700), the data goes to
 * `relocateTo/pgdata-<hash>` instead, with `dataDir` a symlink to it, so the data stays findable
 * from FREELOADER_HOME and later starts follow the link.
 */
export async function reachableDataDir(
  dataDir: string,
  ownedRoot: string | undefined,
  relocateTo: string = RELOCATED_PGDATA_ROOT,
): Promise<string> {
  const path = resolve(dataDir);
  const existing = await lstat(path).catch(() => null);
  if (existing?.isSymbolicLink()) return resolve(dirname(path), await readlink(path));
  const closed = await grantSearch(dirname(path), ownedRoot ? resolve(ownedRoot) : dirname(path));
  if (!closed) return path;
  if (existing) {
    throw new FreeLoaderError(
      'UNAVAILABLE',
      `embedded PostgreSQL runs as user "postgres", which cannot reach ${path} because ${closed} ` +
        'is closed to other users; move the data elsewhere or set DATABASE_URL',
    );
  }
  const real = join(
    resolve(relocateTo),
    `pgdata-${createHash('sha256').update(path).digest('hex').slice(0, 16)}`,
  );
  await mkdir(dirname(real), { recursive: true, mode: 0o711 });
  const stillClosed = await grantSearch(dirname(real), resolve(relocateTo));
  if (stillClosed) {
    throw new FreeLoaderError('UNAVAILABLE', `${stillClosed} is closed to the postgres user`);
  }
  await symlink(real, path);
  return real;
}

/**
 * Give others search permission on the closed directories from / down to `dir` that lie under
 * `owned`; returns the first closed directory outside `owned`, or null when the path is open.
 */
async function grantSearch(dir: string, owned: string): Promise<string | null> {
  let current: string = sep;
  for (const part of ['', ...dir.split(sep).filter(Boolean)]) {
    current = part ? join(current, part) : current;
    const mode = (await stat(current)).mode;
    if ((mode & 0o001) !== 0) continue;
    const rel = relative(owned, current);
    if (rel.startsWith('..') || rel.startsWith(sep)) return current;
    await chmod(current, (mode & 0o7777) | 0o011);
  }
  return null;
}
