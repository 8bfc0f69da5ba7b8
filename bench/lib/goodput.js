import { chmod, mkdir, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { curlRead } from './baselines.js';
import { startNginx } from './nginx.js';

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
