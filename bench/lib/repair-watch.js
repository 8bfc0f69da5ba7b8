// What the repair benchmark watches on a running FreeLoader LAN: a donor's failure class, the
// datasets' health (live copies per morsel), the repair queue, and the donors' memory.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { donorsOfMorsel } from '../../packages/protocol/dist/placement.js';
import { listAgents, managerGet } from './extra-agents.js';

/** How often the benchmark polls the manager while waiting (milliseconds). */
const POLL_MS = 250;

/**
 * @typedef {object} Health
 * @property {number} wanted
 * @property {number} morsels
 * @property {number} liveMin
 * @property {number} liveAvg
 * @property {number} atRisk
 * @property {number} sourceOnly
 */

/**
 * Poll until `done()` answers something other than undefined, or fail after `timeoutMs`
 * (generous: the machine is shared).
 *
 * @template T
 * @param {string} what shown when it times out
 * @param {() => Promise<T | undefined>} done
 * @param {number} timeoutMs
 * @returns {Promise<T>}
 */
export async function pollFor(what, done, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await done();
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

/**
 * The agent's id and failure class (online, offline, lost …) as the manager lists it.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {import('./freeloader-lan.js').FreeLoaderLan} fl
 * @param {string} name the donor's host name
 * @returns {Promise<{ id: string, failureClass: string | undefined }>}
 */
export async function agentClass(tb, fl, name) {
  const a = /** @type {Array<{ id: string, name: string, failureClass?: string }>} */ (
    await listAgents(tb, fl)
  ).find((x) => x.name === name);
  if (!a) throw new Error(`no agent named ${name}`);
  return { id: a.id, failureClass: a.failureClass };
}

/**
 * A dataset's id and health (`GET /datasets/by-path`).
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {import('./freeloader-lan.js').FreeLoaderLan} fl
 * @param {string} path
 * @returns {Promise<{ id: string, health: Health }>}
 */
export async function datasetHealth(tb, fl, path) {
  const d = /** @type {{ id: string, health?: Health }} */ (
    await managerGet(tb, fl, `/datasets/by-path?path=${encodeURIComponent(path)}`)
  );
  if (!d.health) throw new Error(`no health for ${path}`);
  return { id: d.id, health: d.health };
}

/**
 * The repair queue view (`GET /repairs`): units waiting and running, bytes repaired lately.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {import('./freeloader-lan.js').FreeLoaderLan} fl
 * @returns {Promise<{ waitingUnits: number, runningUnits: number, bytes: number, rate: number, doneBytesLastHour: number, units: Array<{ state: string, toAgent: string | null }> }>}
 */
export async function repairQueue(tb, fl) {
  return /** @type {any} */ (await managerGet(tb, fl, '/repairs'));
}

/**
 * Sample the resident size of some processes until stopped; peak per pid, and VmHWM (the
 * kernel's own high-water mark, which also catches peaks between samples) at the end.
 *
 * @param {number[]} pids
 * @param {number} [everyMs]
 * @returns {{ stop: () => Array<{ pid: number, peakRss: number, hwm: number }> }}
 * @example const rss = sampleRss([1234]); …; rss.stop() // [{ pid: 1234, peakRss: 9.1e7, hwm: 9.3e7 }]
 */
export function sampleRss(pids, everyMs = 200) {
  const peak = new Map(pids.map((p) => [p, 0]));
  const timer = setInterval(() => {
    for (const p of pids) peak.set(p, Math.max(peak.get(p) ?? 0, statusKb(p, 'VmRSS') * 1024));
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return pids.map((pid) => ({
        pid,
        peakRss: peak.get(pid) ?? 0,
        hwm: statusKb(pid, 'VmHWM') * 1024,
      }));
    },
  };
}

/**
 * Each process's resident memory now (bytes, 0 for one that is gone): the donors' RSS before
 * the repair, so its row tells what the repair added from what the import left resident.
 *
 * @example rssNow([1234]) // → [131_203_072]
 * @param {number[]} pids
 * @returns {number[]}
 */
export function rssNow(pids) {
  return pids.map((p) => statusKb(p, 'VmRSS') * 1024);
}

/** A kB field of /proc/<pid>/status (0 when the process is gone). @param {number} pid @param {string} field */
function statusKb(pid, field) {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * The rate repair may reach under its caps (bytes/s): every lost copy moves from the live donor
 * holding its twin (the sender: placement decides who) to a live donor that does not hold it,
 * each donor sending at most b and receiving at most b (ThriftStore §4.3: a node's upload and
 * download channels each serve one transfer at a time) and no faster than its link. The repair
 * takes at least as long as its busiest sender needs, and as all bytes need over every
 * receiver's download together. (With a live copy of every morsel left, the source's B plays no
 * part.)
 *
 * @param {{ b: number, senders: Array<{ bytes: number, bps: number }>, receivers: number[] }} caps
 *   b bytes/s; senders: the bytes each must send and its upload goodput (bytes/s); receivers:
 *   the live donors' download goodput (bytes/s)
 * @returns {number}
 * @example
 *   // Two senders of 50 MB each, four receivers, links faster than b = 8 MiB/s: 2 × b.
 *   repairCapRate({ b: 8 * 2 ** 20, senders: [{ bytes: 5e7, bps: 12e6 }, { bytes: 5e7, bps: 12e6 }],
 *     receivers: [12e6, 12e6, 12e6, 12e6] }) // 16777216
 */
export function repairCapRate({ b, senders, receivers }) {
  const total = senders.reduce((s, x) => s + x.bytes, 0);
  const busiest = Math.max(...senders.map((x) => x.bytes / Math.min(b, x.bps)));
  const intake = receivers.reduce((s, l) => s + Math.min(b, l), 0);
  return total / Math.max(busiest, total / intake);
}

/**
 * Bytes each live donor must send to replace `victim`'s copies: for every morsel the victim
 * holds (in any copy), its other holders; the first of them is the sender (with n=2 the only one).
 *
 * @param {{ morselSize: number, morsels: number, extents: import('../../packages/protocol/dist/index.js').Extent[] }} placement
 *   `GET /datasets/:id/placement`
 * @param {number} sizeBytes the dataset's size (the last morsel may be short)
 * @param {string} victim agent id
 * @returns {Map<string, number>} sender id → bytes
 * @example sendersOf({ morselSize: 1, morsels: 2, extents: [{ copy: 0, first: 0, count: 2, unit: 1, phase: 0, donors: ['v', 'a'] }, { copy: 1, first: 0, count: 2, unit: 1, phase: 1, donors: ['v', 'a'] }] }, 2, 'v') // Map { 'a' => 2 }
 */
export function sendersOf(placement, sizeBytes, victim) {
  const out = new Map();
  for (let m = 0; m < placement.morsels; m++) {
    const holders = donorsOfMorsel(placement.extents, m);
    if (!holders.includes(victim)) continue;
    const sender = holders.find((h) => h !== victim);
    if (!sender) continue;
    const len = Math.min(placement.morselSize, sizeBytes - m * placement.morselSize);
    out.set(sender, (out.get(sender) ?? 0) + len);
  }
  return out;
}

/** A donor line of `freeloader get --stats`: address, MB delivered, busy seconds. */
const DONOR_LINE = /^\s+\[?([\d.:a-f]+?)\]?:\d+\s+([\d.]+) MB\s+([\d.]+) s\s/gm;

/**
 * What each donor delivered to a `freeloader get --stats` and how long it was busy, by its
 * address (MB = 10^6 bytes, as printed: one decimal).
 *
 * @param {string} stderr
 * @returns {Map<string, { bytes: number, seconds: number }>} donor IP → bytes and busy seconds
 * @example servedByDonor('  10.77.1.2:7500            12.6 MB    1.25 s    10.1 MB/s') // Map { '10.77.1.2' => { bytes: 12600000, seconds: 1.25 } }
 */
export function servedByDonor(stderr) {
  const out = new Map();
  for (const m of stderr.matchAll(DONOR_LINE)) {
    out.set(m[1], { bytes: Number(m[2]) * 1e6, seconds: Number(m[3]) });
  }
  return out;
}

/**
 * The repair rate the caps allow when readers come first (bytes/s): as {@link repairCapRate},
 * but while a sender serves the foreground read (`fgSeconds`, at `fgBytes / fgSeconds`) repair
 * gets only what that read leaves of its uplink, and afterwards no more than b. So a sender
 * needs fgSeconds + (its bytes − what fit beside the read) / min(b, link). With the benchmark's
 * get (~10 MB/s from each 11.8 MB/s uplink for ~1.3 s) inside a 2.6 s repair at b, the senders
 * need ~3.6 s: 0.72 of the caps-only rate.
 *
 * @param {{ b: number, senders: Array<{ bytes: number, bps: number, fgBytes: number, fgSeconds: number }>, receivers: number[] }} caps
 * @returns {number}
 * @example
 *   // 24 MB at b = 8 MB/s on a 12 MB/s link, after 1 s of a reader taking 11 MB/s: 1 s + 23 MB at b.
 *   repairCapRateWithForeground({ b: 8e6, senders: [{ bytes: 24e6, bps: 12e6, fgBytes: 11e6, fgSeconds: 1 }],
 *     receivers: [12e6] }) // 24e6 / (1 + 23e6 / 8e6) ≈ 6.19e6
 */
export function repairCapRateWithForeground({ b, senders, receivers }) {
  const total = senders.reduce((s, x) => s + x.bytes, 0);
  const need = senders.map((x) => {
    const pace = Math.min(b, x.bps);
    if (x.fgSeconds <= 0) return x.bytes / pace;
    const beside = Math.min(pace, Math.max(0, x.bps - x.fgBytes / x.fgSeconds)) * x.fgSeconds;
    if (beside >= x.bytes) return x.bytes / Math.min(pace, beside / x.fgSeconds);
    return x.fgSeconds + (x.bytes - beside) / pace;
  });
  const intake = receivers.reduce((s, l) => s + Math.min(b, l), 0);
  return total / Math.max(...need, total / intake);
}
