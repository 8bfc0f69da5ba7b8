import { readFileSync } from 'node:fs';
import { readFile, realpath, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { FreeLoaderError } from '@freeloader/protocol';
import { classifyPostmaster, type ProcessInfo } from './postmaster-holder.js';

/** How long an orphaned PostgreSQL gets for a fast shutdown before an immediate one (ms). */
const ORPHAN_FAST_SHUTDOWN_MS = 60_000;
/** How long an immediate shutdown may take before we give up (ms). */
const ORPHAN_IMMEDIATE_SHUTDOWN_MS = 15_000;

/**
 * Make `dataDir` startable after a crash: a lock file naming a dead process is removed; our own
 * PostgreSQL orphaned by a manager that was killed is stopped cleanly (SIGINT, PostgreSQL's fast
 * shutdown: its data is consistent, nothing to recover), then immediately (SIGQUIT) if it hangs;
 * a server another live manager runs, or any other holder, is an UNAVAILABLE error that names
 * the pid and what to do. Linux only (reads /proc); elsewhere PostgreSQL's own check stands.
 *
 * @example await clearStalePostmaster('/home/u/.freeloader/manager/pgdata', console.log)
 */
export async function clearStalePostmaster(
  dataDir: string,
  log: (message: string) => void = () => undefined,
): Promise<void> {
  const lockPath = join(dataDir, 'postmaster.pid');
  const lockFile = await readFile(lockPath, 'utf8').catch(() => null);
  // The server was started on the real path (older versions linked the data elsewhere).
  const real = await realpath(dataDir).catch(() => dataDir);
  const holder = classifyPostmaster(lockFile, real, procInfo);
  switch (holder.kind) {
    case 'none':
      return;
    case 'stale':
      log(`removing ${lockPath}: its PostgreSQL (pid ${holder.pid}) is gone`);
      await unlink(lockPath).catch(() => undefined);
      return;
    case 'orphan':
      log(
        `stopping the PostgreSQL (pid ${holder.pid}) a previous manager left running on ${dataDir}`,
      );
      await stopOrphan(holder.pid, lockPath);
      return;
    case 'in-use':
      throw new FreeLoaderError(
        'UNAVAILABLE',
        `another manager (pid ${holder.ownerPid}) is running the PostgreSQL (pid ${holder.pid}) ` +
          `on ${dataDir}: stop that manager first, or give this one another FREELOADER_HOME`,
        { pid: holder.pid, ownerPid: holder.ownerPid },
      );
    case 'foreign':
      throw new FreeLoaderError(
        'UNAVAILABLE',
        `${lockPath} names pid ${holder.pid} (${holder.command}), which is not this home's ` +
          `PostgreSQL: stop that process, or, if no PostgreSQL runs on ${dataDir}, remove ` +
          `${lockPath} and start again`,
        { pid: holder.pid },
      );
  }
}

async function stopOrphan(pid: number, lockPath: string): Promise<void> {
  signal(pid, 'SIGINT');
  if (await exited(pid, ORPHAN_FAST_SHUTDOWN_MS)) return;
  signal(pid, 'SIGQUIT');
  if (await exited(pid, ORPHAN_IMMEDIATE_SHUTDOWN_MS)) return;
  throw new FreeLoaderError(
    'UNAVAILABLE',
    `the orphaned PostgreSQL (pid ${pid}) did not stop; kill it (kill -9 ${pid}) and remove ` +
      `${lockPath}, then start again`,
    { pid },
  );
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

/** Poll until `pid` is gone (true) or `timeoutMs` passed (false). */
async function exited(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}

function alive(pid: number): boolean {
  // A zombie (exited, not yet reaped by its parent) holds nothing: count it as gone.
  return procInfo(pid) !== null;
}

/** argv and parent of a live process from /proc; null when it does not exist (or is a zombie). */
export function procInfo(pid: number): ProcessInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z' || rest[0] === 'X') return null;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return { argv, ppid: Number(rest[1]) };
  } catch {
    return null;
  }
}
