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

/**
 * Run `read` (a `freeloader get --stats`, resolving its stderr) while watching `donorPids`.
 *
 * @param {number[]} donorPids
 * @param {number} bytes bytes the read returns
 * @param {() => Promise<string>} read
 * @returns {Promise<ReadCost>}
 * @example const c = await readCost(pids, 2 ** 28, async () => (await cli(['get', …, '--stats'])).stderr);
 *   // c.total e.g. 1.9 (client 1.1 + four donors 0.2 each)
 */
export async function readCost(donorPids, bytes, read) {
  const before = donorPids.map(cpuTimes);
  const stderr = await read();
  const after = donorPids.map(cpuTimes);
  const gib = bytes / 2 ** 30;
  const per = (/** @type {number} */ s) => Math.max(0, s) / gib;
  const client = clientCpuTimes(stderr);
  const donors = after.map((a, i) => ({
    user: per(a.user - (before[i]?.user ?? 0)),
    system: per(a.system - (before[i]?.system ?? 0)),
  }));
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
