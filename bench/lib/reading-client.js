// A FreeLoader client reading one dataset round and round as fast as it can, recording when
// every morsel arrived, so a benchmark can read its throughput over any window.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatasetReader } from '../../apps/agent/dist/client/dataset-reader.js';
import { fetchMap } from '../../apps/agent/dist/client/fetch-map.js';
import { ManagerClient } from '../../apps/agent/dist/manager-client.js';

/**
 * The manager's API as its first admin (password from the cluster home).
 *
 * @param {string} url @param {string} home
 * @returns {Promise<ManagerClient>}
 */
export async function adminClient(url, home) {
  const password = (await readFile(join(home, 'manager', 'admin-password'), 'utf8')).trim();
  const client = new ManagerClient(url);
  const { token } = /** @type {{ token: string }} */ (
    await client.request('POST', '/auth/login', { username: 'admin', password })
  );
  client.setCredentials({ kind: 'user', token });
  return client;
}

/**
 * @typedef {object} ReadingClient
 * @property {() => Promise<void>} stop
 * @property {(from: number, to: number) => number} rateIn bytes/s received in [from, to) (performance.now() ms)
 */

/**
 * Start reading `dataset` continuously (4 morsels in flight), verified as always.
 *
 * @param {ManagerClient} manager @param {string} dataset path or id
 * @returns {Promise<ReadingClient>}
 */
export async function startReadingClient(manager, dataset) {
  const reader = new DatasetReader(await fetchMap(manager, dataset));
  /** @type {Array<[number, number]>} */
  const log = [];
  let stopped = false;
  const loop = (async () => {
    const inFlight = new Set();
    for (let i = 0; !stopped; i = (i + 1) % reader.count) {
      const p = reader.readMorsel(i).then(
        (b) => void log.push([performance.now(), b.length]),
        () => undefined,
      );
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      if (inFlight.size >= 4) await Promise.race(inFlight);
    }
    await Promise.allSettled(inFlight);
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await reader.close();
    },
    rateIn(from, to) {
      let bytes = 0;
      for (const [t, n] of log) if (t >= from && t < to) bytes += n;
      return bytes / ((to - from) / 1000);
    },
  };
}
