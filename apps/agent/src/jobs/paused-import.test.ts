import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MiB,
  type DatasetView,
  type ImportResponse,
  type TransferView,
} from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import type { SettingsClient } from '../control-api/settings-client.js';
import { settingsOf } from '../test/settings-of.js';
import { waitFor } from '../test/cluster-harness.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';

// A real donor process whose owner paused donating, and a real import placed on it: the agent
// takes the job but pulls nothing from the source while paused (the source sees no request),
// and after the owner resumes the import completes and reads back byte-identical. The job
// neither fails nor has to be restarted because of the pause.
let c: DataCluster;
let settings: SettingsClient;
const sources: TestServer[] = [];
const PAUSED_MS = 2_500;

beforeAll(async () => {
  c = await startDataCluster(1, '64MiB');
  settings = await settingsOf(c.agents[0]!);
}, 180_000);

afterAll(async () => {
  await Promise.all(sources.map((s) => s.close()));
  await c?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('an import on a paused donor', () => {
  it.each([
    ['ranged (the source honours Range)', true, 51],
    ['streamed (the source ignores Range)', false, 52],
  ])(
    '%s waits out the pause, then completes byte-identical',
    async (_name, ranges, seed) => {
      const src = await startTestServer({ size: 6 * MiB + 777, seed, ranges });
      sources.push(src);
      await settings.pause('indefinite');
      const before = await settings.state();
      expect(before.governor.state).toBe('paused');

      const res = await c.tm.admin.request<ImportResponse>('POST', '/datasets', {
        uri: src.url,
        name: `paused/${seed}.bin`,
      });
      const id = res.dataset!.id;
      // From here on, every request the source sees comes from the agent's import job.
      const requestsBefore = src.requests;
      const importJob = async (): Promise<TransferView | undefined> =>
        (await c.tm.admin.request<TransferView[]>('GET', `/transfers?datasetId=${id}`)).find(
          (j) => j.kind === 'import',
        );
      await waitFor(
        'the agent to take the import job',
        async () => ((await importJob())?.state === 'running' ? true : undefined),
        60_000,
        100,
      );
      await sleep(PAUSED_MS);
      expect(await importJob()).toMatchObject({ state: 'running', doneBytes: 0 });
      const during = await c.tm.admin.request<DatasetView>('GET', `/datasets/${id}`);
      expect(during.state).toBe('importing');
      const local = await settings.state();
      expect(local.quota.usedBytes).toBe(before.quota.usedBytes);
      // A streamed import has opened its one request; it must not read on. A ranged one asks nothing.
      expect(src.requests - requestsBefore).toBeLessThanOrEqual(ranges ? 0 : 1);

      await settings.resume();
      const done = await waitFor(
        'the import to finish after resume',
        async () => {
          const d = await c.tm.admin.request<DatasetView>('GET', `/datasets/${id}`);
          return d.state === 'ready' || d.state === 'failed' ? d : undefined;
        },
        60_000,
        100,
      );
      expect(done.state).toBe('ready');
      expect((await c.get(`paused/${seed}.bin`)).sha256).toBe(sha256Hex(src.content));
    },
    60_000,
  );
});
