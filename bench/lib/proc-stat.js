import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; with
 * `children`, also what its waited-for children used. 0 when the process is unknown or gone.
 *
 * @param {number | undefined} pid
 * @param {{ children?: boolean }} [opts]
 * @returns {number}
 * @example cpuSeconds(process.pid) // e.g. 0.42
 */
export function cpuSeconds(pid, opts = {}) {
  if (pid === undefined) return 0;
  try {
    // Fields after the command name: utime, stime, cutime, cstime are the 12th–15th of them.
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const own = Number(f[11]) + Number(f[12]);
    const kids = opts.children ? Number(f[13]) + Number(f[14]) : 0;
    return (own + kids) / USER_HZ;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds all cores together have spent busy since boot — user, nice, system, irq, softirq
 * and steal; not idle or iowait — from the first line of /proc/stat. The difference over a run
 * is what the whole machine spent on it (every process and the kernel).
 *
 * @param {string} [stat] /proc/stat's text (read when absent)
 * @returns {number}
 * @example busySeconds('cpu  200 0 100 5000 10 0 0 0 0 0\n') // 3
 */
export function busySeconds(stat = readFileSync('/proc/stat', 'utf8')) {
  const f = (stat.split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) / USER_HZ;
}
