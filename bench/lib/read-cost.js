import { setTimeout as sleep } from 'node:timers/promises';
import { parseGetSummary } from './freeloader.js';
import { clientCpuTimes, cpuTimes } from './proc-stat.js';
import { median } from './stats.js';

/**
 * What one read cost, per GiB read: CPU seconds of the client (user and system, from its
 * `get --stats` line) and of every donor (from /proc/<pid>/stat before and after). CPU per GiB
 * hardly moves with the machine's load, unlike MB/s, so before/after comparisons use it.
 *
 * @typedef {object} ReadCost
 * @property {number} mbps the read's verified MB/s
 * @property {{ user: number, system: number }} client CPU-s per GiB
 * @property {Array<{ user: number, system: number }>} donors CPU-s per GiB, one per donor pid
 * @property {number} total client + every donor, CPU-s per GiB
 */

/** Donors together using less than this (CPU-s per s) count as quiet: heartbeats and probes. */
const QUIET_CPU_PER_S = 0.1;
/** Each sample of the donors' idle rate lasts this long (ms). */
const QUIET_WINDOW_MS = 2000;
/** Give up waiting for quiet donors after this long (ms), and say so. */
const QUIET_TIMEOUT_MS = 120_000;

/**
 * Wait until the donors are quiet (an import's copies, hash reports and checks done: the first
 * reads after an import met donors still busy with them, 2–3× their CPU per GiB), then return
 * each one's idle CPU rate (CPU-s per s), which `readCost` takes off what a read is charged.
 *
 * @param {number[]} pids
 * @param {(msg: string) => void} log
 * @returns {Promise<number[]>}
 * @example const idle = await quietDonors(pids, console.error); // e.g. [0.007, 0.006, 0.008, 0.007]
 */
export async function quietDonors(pids, log) {
  const started = Date.now();
  for (;;) {
    const before = pids.map(cpuTimes);
    const t0 = performance.now();
    await sleep(QUIET_WINDOW_MS);
    const s = (performance.now() - t0) / 1000;
    const rates = pids.map((pid, i) => {
      const a = cpuTimes(pid);
      const b = before[i] ?? { user: 0, system: 0 };
      return (a.user + a.system - b.user - b.system) / s;
    });
    const sum = rates.reduce((x, y) => x + y, 0);
    if (sum < QUIET_CPU_PER_S) return rates;
    if (Date.now() - started > QUIET_TIMEOUT_MS) {
      log(`donors never went quiet (${sum.toFixed(3)} CPU-s per s): their CPU includes it`);
      return rates.map(() => 0);
    }
  }
}

/**
 * Run `read` (a `freeloader get --stats`, resolving its stderr) while watching `donorPids`;
 * `idle` (CPU-s per s per donor, from {@link quietDonors}) is taken off each donor's charge.
 *
 * @param {number[]} donorPids
 * @param {number} bytes bytes the read returns
 * @param {() => Promise<string>} read
 * @param {number[]} [idle] each donor's idle CPU-s per s
 * @returns {Promise<ReadCost>}
 * @example const c = await readCost(pids, 2 ** 28, async () => (await cli(['get', …, '--stats'])).stderr);
 *   // c.total e.g. 1.9 (client 1.1 + four donors 0.2 each)
 */
export async function readCost(donorPids, bytes, read, idle = []) {
  const before = donorPids.map(cpuTimes);
  const t0 = performance.now();
  const stderr = await read();
  const after = donorPids.map(cpuTimes);
  const seconds = (performance.now() - t0) / 1000;
  const gib = bytes / 2 ** 30;
  const per = (/** @type {number} */ s) => Math.max(0, s) / gib;
  const client = clientCpuTimes(stderr);
  const donors = after.map((a, i) => {
    const user = a.user - (before[i]?.user ?? 0);
    const system = a.system - (before[i]?.system ?? 0);
    // The idle part is charged to user and system in proportion (/proc cannot tell them apart).
    const busy = Math.max(user + system, 1e-9);
    const keep = Math.max(0, 1 - ((idle[i] ?? 0) * seconds) / busy);
    return { user: per(user * keep), system: per(system * keep) };
  });
  const c = { user: per(client.user), system: per(client.system) };
  const total = c.user + c.system + donors.reduce((s, d) => s + d.user + d.system, 0);
  return { mbps: parseGetSummary(stderr).mbps, client: c, donors, total };
}

/**
 * The run with the median total of several, and a one-line account of it.
 *
 * @param {ReadCost[]} runs
 * @returns {{ run: ReadCost, text: string }}
 * @example medianCost(runs).text // 'client 1.10 (user 0.80, system 0.30) + donors 0.20 0.21 … = 1.93 CPU-s/GiB'
 */
export function medianCost(runs) {
  const mid = median(runs.map((r) => r.total));
  const run = /** @type {ReadCost} */ (runs.find((r) => r.total === mid) ?? nearest(runs, mid));
  const f = (/** @type {number} */ n) => n.toFixed(2);
  const donors = run.donors.map((d) => f(d.user + d.system)).join(' ');
  const text =
    `client ${f(run.client.user + run.client.system)} (user ${f(run.client.user)}, ` +
    `system ${f(run.client.system)}) + donors ${donors} = ${f(run.total)} CPU-s/GiB`;
  return { run, text };
}

/** @param {ReadCost[]} runs @param {number} total */
function nearest(runs, total) {
  return [...runs].sort((a, b) => Math.abs(a.total - total) - Math.abs(b.total - total))[0];
}
