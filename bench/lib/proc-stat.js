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
