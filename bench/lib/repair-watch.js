// What the repair benchmark watches on a running FreeLoader LAN: a donor's failure class, the
// datasets' health (live copies per morsel), the repair queue, and the donors' memory.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
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
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
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
 * @returns {Promise<{ waitingUnits: number, runningUnits: number, bytes: number, doneBytesLastHour: number }>}
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
 * The rate repair may reach under its caps (bytes/s): every copy moves from a live donor
 * holding it to a live donor that does not, each donor sending at most b and receiving at most
 * b (ThriftStore §4.3: a node's upload and download channels each serve one transfer at a time)
 * and no faster than its link. (With a live copy of every morsel left, the source's B plays no
 * part.)
 *
 * @param {{ b: number, senders: number[], receivers: number[] }} caps
 *   b bytes/s; senders / receivers: the participating donors' upload / download goodput (bytes/s)
 * @returns {number}
 * @example repairCapRate({ b: 8 * 2 ** 20, senders: [12e6, 12e6, 12e6], receivers: [12e6, 12e6, 12e6] }) // 25165824 (3 × b)
 */
export function repairCapRate({ b, senders, receivers }) {
  const side = (/** @type {number[]} */ links) => links.reduce((s, l) => s + Math.min(b, l), 0);
  return Math.min(side(senders), side(receivers));
}
