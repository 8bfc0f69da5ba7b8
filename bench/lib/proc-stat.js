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
 * User and system CPU seconds a process has used so far (its own threads, not its children),
 * from /proc/<pid>/stat; zeros when the process is unknown or gone.
 *
 * @param {number | undefined} pid
 * @returns {{ user: number, system: number }}
 * @example cpuTimes(process.pid) // e.g. { user: 0.31, system: 0.11 }
 */
export function cpuTimes(pid) {
  if (pid === undefined) return { user: 0, system: 0 };
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return { user: Number(f[11]) / USER_HZ, system: Number(f[12]) / USER_HZ };
  } catch {
    return { user: 0, system: 0 };
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

/** Client CPU seconds of a `freeloader get --stats` (its "client CPU during the read" line). */
const CLIENT_CPU = /client CPU during the read ([\d.]+) s/;

/**
 * The client's CPU seconds from `get --stats` stderr; throws when the line is missing.
 *
 * @param {string} stderr
 * @returns {number}
 * @example clientCpuSeconds('client CPU during the read 1.25 s (user 1.00, system 0.25)') // 1.25
 */
export function clientCpuSeconds(stderr) {
  const c = CLIENT_CPU.exec(stderr);
  if (!c) throw new Error(`no CPU line from get --stats: ${stderr}`);
  return Number(c[1]);
}

/** The same line's user and system parts. */
const CLIENT_CPU_PARTS = /client CPU during the read [\d.]+ s \(user ([\d.]+), system ([\d.]+)\)/;

/**
 * The client's user and system CPU seconds from `get --stats` stderr; throws when missing.
 *
 * @param {string} stderr
 * @returns {{ user: number, system: number }}
 * @example clientCpuTimes('client CPU during the read 1.25 s (user 1.00, system 0.25)') // { user: 1, system: 0.25 }
 */
export function clientCpuTimes(stderr) {
  const c = CLIENT_CPU_PARTS.exec(stderr);
  if (!c) throw new Error(`no CPU line from get --stats: ${stderr}`);
  return { user: Number(c[1]), system: Number(c[2]) };
}

/**
 * The rate this machine's cores could sustain if reading cost `cpuSecondsPerGiB` of CPU (client
 * and donors together) and nothing else ran: a read below it by much is not CPU-bound (MB/s).
 *
 * @param {number} cpuSecondsPerGiB
 * @param {number} cores
 * @returns {number}
 * @example cpuCeilingMBps(4, 2) // 2 × 2^30 / 4 / 1e6 ≈ 536.9
 */
export function cpuCeilingMBps(cpuSecondsPerGiB, cores) {
  return (cores * 2 ** 30) / cpuSecondsPerGiB / 1e6;
}
