import { chmod, mkdir, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { curlRead } from './baselines.js';
import { startNginx } from './nginx.js';
import { median } from './stats.js';

/**
 * @typedef {object} Goodput
 * @property {string} from host name
 * @property {string} to host name
 * @property {number} mbps measured MB/s of one curl stream
 * @property {number | null} tcMBps the narrower tc rate on the path in MB/s, null if unshaped
 * @property {number | null} ratio mbps / tcMBps
 */

/**
 * A link's limit as the benchmarks use it: the goodput of ONE curl stream from `from` to `to`
 * over the shaped path, measured in the same run (≈0.955 of the tc rate: Ethernet+IP+TCP headers
 * take 66 of every 1514 bytes on the wire). Serves a sparse file of `bytes` from a temporary
 * nginx on port 8081 of `from`.
 *
 * @param {import('./testbed.js').LanHost} from
 * @param {import('./testbed.js').LanHost} to
 * @param {number} bytes transfer size; a few seconds at the rate keeps slow start negligible
 * @param {string} workDir scratch directory (created)
 * @returns {Promise<Goodput>}
 * @example
 *   const g = await measureGoodput(tb.donors[0], tb.client, 25e6, `${tmp}/gp`);
 *   // g.mbps ≈ 11.9 for a 100 Mbit/s donor
 */
export async function measureGoodput(from, to, bytes, workDir) {
  const dir = join(workDir, `goodput-${from.name}-${to.name}`);
  const root = join(dir, 'www');
  await mkdir(root, { recursive: true });
  await chmod(workDir, 0o755);
  await chmod(dir, 0o755);
  await chmod(root, 0o755);
  const file = join(root, 'blob');
  await writeFile(file, '');
  await truncate(file, bytes);
  const web = await startNginx(from, { root, workDir: join(dir, 'nginx'), port: 8081 });
  try {
    const read = await curlRead(to, web.url('blob'), { expectBytes: bytes });
    const rates = [from.link?.rateMbit, to.link?.rateMbit].filter((r) => typeof r === 'number');
    const tcMBps = rates.length ? Math.min(...rates) / 8 : null;
    return {
      from: from.name,
      to: to.name,
      mbps: read.mbps,
      tcMBps,
      ratio: tcMBps ? read.mbps / tcMBps : null,
    };
  } finally {
    await web.stop();
  }
}

/**
 * The limits a striped read into the client is compared with, measured in the same run: the
 * client's 1 Gbit/s link (median of `clientSamples` curl reads from the unshaped manager) and
 * each donor's 100 Mbit/s link to the client (one each), `seconds` of line rate per probe.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {{ workDir: string, seconds: number, clientSamples: number }} opts
 * @returns {Promise<{ client: number, donors: number[], limit: (width: number) => number }>}
 *   MB/s; `limit(w)` is min(client, Σ goodput of the first w donors)
 * @example
 *   const links = await measureLanLimits(tb, { workDir, seconds: 1, clientSamples: 1 });
 *   links.limit(4); // ≈ 47.7 with four 100 Mbit/s donors
 */
export async function measureLanLimits(tb, opts) {
  const probe = (/** @type {import('./testbed.js').LanHost} */ from, /** @type {number} */ mbit) =>
    measureGoodput(from, tb.client, Math.round((mbit / 8) * 1e6 * opts.seconds), opts.workDir);
  /** @type {number[]} */
  const clientRuns = [];
  for (let i = 0; i < opts.clientSamples; i++) {
    clientRuns.push((await probe(tb.manager, tb.client.link?.rateMbit ?? 1000)).mbps);
  }
  const client = median(clientRuns);
  /** @type {number[]} */
  const donors = [];
  for (const d of tb.donors) donors.push((await probe(d, d.link?.rateMbit ?? 100)).mbps);
  const limit = (/** @type {number} */ w) =>
    Math.min(
      client,
      donors.slice(0, w).reduce((a, b) => a + b, 0),
    );
  return { client, donors, limit };
}
