import { readdirSync, readFileSync } from 'node:fs';
import { cpuSeconds } from './proc-stat.js';

/**
 * Pids of every process below `root` (children, grandchildren…), from /proc: how a benchmark
 * finds the PostgreSQL a manager started, to charge its CPU and memory separately.
 *
 * @param {number} root
 * @returns {number[]}
 * @example descendants(process.pid) // e.g. [4242, 4243]
 */
export function descendants(root) {
  /** @type {Map<number, number[]>} */
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = parentOf(Number(entry));
    if (ppid === undefined) continue;
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  const out = [];
  const todo = [...(children.get(root) ?? [])];
  while (todo.length) {
    const pid = /** @type {number} */ (todo.pop());
    out.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** @param {number} pid @returns {number | undefined} */
function parentOf(pid) {
  try {
    // After the command name (which may hold spaces): state, ppid, …
    const rest = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1];
    const ppid = Number(rest?.split(' ')[1]);
    return Number.isFinite(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Proportional set size of a process in bytes (shared pages split among their users, so
 * PostgreSQL's shared buffers are not counted once per backend); RSS when smaps_rollup is not
 * readable; 0 when the process is gone.
 *
 * @param {number} pid
 * @returns {number}
 */
export function memoryBytes(pid) {
  for (const [file, key] of [
    [`/proc/${pid}/smaps_rollup`, 'Pss:'],
    [`/proc/${pid}/status`, 'VmRSS:'],
  ]) {
    try {
      const line = readFileSync(/** @type {string} */ (file), 'utf8')
        .split('\n')
        .find((l) => l.startsWith(/** @type {string} */ (key)));
      if (line) return Number(line.split(/\s+/)[1]) * 1024;
    } catch {
      // try the next source
    }
  }
  return 0;
}

/**
 * CPU seconds used so far by a group of processes: each one's own time, plus what its exited
 * children left in its counters (a PostgreSQL backend that ended is charged to the postmaster).
 *
 * @param {number[]} pids
 * @returns {number}
 */
export function groupCpuSeconds(pids) {
  return pids.reduce((sum, pid) => sum + cpuSeconds(pid, { children: true }), 0);
}
