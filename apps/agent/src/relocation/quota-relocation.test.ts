import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MiB,
  donorsOfMorsel,
  type AgentView,
  type DatasetMap,
  type DatasetView,
} from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { DatasetReader } from '../client/dataset-reader.js';
import { fetchMap } from '../client/fetch-map.js';
import type { SettingsClient } from '../control-api/settings-client.js';
import { settingsOf } from '../test/settings-of.js';
import { waitFor } from '../test/cluster-harness.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';

// Three real donors, two datasets striped over all of them; the first donor's owner cuts its
// quota below what it holds. The excess moves to the other donors while clients keep reading,
// and afterwards every dataset reads back byte-identical without touching the first donor.
let c: DataCluster;
const sources: TestServer[] = [];
let settings: SettingsClient;

beforeAll(async () => {
  c = await startDataCluster(3, '24MiB');
  settings = await settingsOf(c.agents[0]!);
  sources.push(await startTestServer({ size: 12 * MiB, seed: 51 }));
  sources.push(await startTestServer({ size: 6 * MiB - 1000, seed: 52 }));
  for (const [i, s] of sources.entries()) {
    // One copy each: this follows the quota cut's bytes (planRelocation's tests keep copies apart).
    const d = await c.importAndWait({
      uri: s.url,
      name: `reloc/d${i}.bin`,
      width: 3,
      replicas: 1,
    });
    expect(d.state).toBe('ready');
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(sources.map((s) => s.close()));
  await c?.close();
});

const ledgerOf = async (agentId: string): Promise<AgentView> =>
  (await c.tm.agents()).find((a) => a.id === agentId)!;

describe('quota cut below usage', () => {
  it('relocates the excess to other donors; every dataset still reads byte-identical', async () => {
    const first = c.agents[0]!.agentId;
    // Placement spreads both datasets (how evenly is the placement policy's business).
    const ledger = (await ledgerOf(first)).usedBytes;
    expect(ledger).toBeGreaterThanOrEqual(2 * MiB);

    // A reader that fetched its maps just before the cut: they still name the first donor.
    const oldMaps = await Promise.all(
      sources.map((_, i) => fetchMap(c.tm.admin, `reloc/d${i}.bin`)),
    );

    // Readers keep going while the data moves.
    let reads = 0;
    let stop = false;
    const reading = (async () => {
      while (!stop) {
        for (const [i, s] of sources.entries()) {
          expect((await c.get(`reloc/d${i}.bin`)).sha256).toBe(sha256Hex(s.content));
          reads++;
        }
      }
    })();

    const after = await settings.update({ quotaBytes: 1 * MiB });
    expect(after.quota.quotaBytes).toBe(1 * MiB);
    expect(after.relocation.state).toBe('relocating');
    expect(after.relocation.totalBytes).toBe(ledger);

    const done = await waitFor(
      'the relocation to finish and the moved morsels to be freed',
      async () => {
        const s = await settings.state();
        return s.relocation.state === 'done' && s.quota.usedBytes === 0 ? s : undefined;
      },
      60_000,
      200,
    );
    stop = true;
    await reading;
    expect(done.relocation).toMatchObject({ unplacedBytes: 0, error: null });
    expect(done.relocation.doneBytes).toBeGreaterThan(ledger - MiB);
    expect(reads).toBeGreaterThan(0);

    for (const [i, s] of sources.entries()) {
      const view = await c.tm.admin.request<DatasetView>(
        'GET',
        `/datasets/by-path?path=${encodeURIComponent(`reloc/d${i}.bin`)}`,
      );
      const full = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${view.id}/map`);
      const count = Math.ceil(s.content.length / MiB);
      const holders = new Set(
        Array.from({ length: count }, (_, m) => donorsOfMorsel(full.extents, m)[0]),
      );
      expect(holders.has(first)).toBe(false);
      const out = await c.get(`reloc/d${i}.bin`);
      expect(out.sha256).toBe(sha256Hex(s.content));
      expect(out.donorFailures).toBe(0);
    }
    // The manager's ledger followed the bytes: nothing left on the first donor.
    expect((await ledgerOf(first)).usedBytes).toBe(0);

    // Well past the 5 s the old copies used to live, the reader with the old maps still reads
    // everything, from the first donor too: its copies stay until those maps' capabilities
    // expire (minutes), and are not counted as used meanwhile.
    expect(done.relocation.retainedBytes).toBeGreaterThan(ledger - MiB);
    await new Promise((r) => setTimeout(r, 6_000));
    for (const [i, s] of sources.entries()) {
      const reader = new DatasetReader(oldMaps[i]!);
      try {
        const parts: Buffer[] = [];
        for (let m = 0; m < reader.count; m++) parts.push(await reader.readMorsel(m));
        expect(sha256Hex(Buffer.concat(parts))).toBe(sha256Hex(s.content));
      } finally {
        await reader.close();
      }
    }
    expect((await settings.state()).quota.usedBytes).toBe(0);
    const others = await Promise.all(c.agents.slice(1).map((a) => ledgerOf(a.agentId)));
    expect(others.reduce((s, a) => s + a.usedBytes, 0)).toBe(18 * MiB);
  }, 180_000);

  it('raising the quota again is immediate', async () => {
    const s = await settings.update({ quotaBytes: 20 * MiB });
    expect(s.quota).toMatchObject({ quotaBytes: 20 * MiB });
    // No wait: the change is the manager's when update returns, and a heartbeat the agent built
    // before it (with the old quota) cannot put the old quota back (its version is older).
    expect((await ledgerOf(c.agents[0]!.agentId)).quotaBytes).toBe(20 * MiB);
    await new Promise((r) => setTimeout(r, 200));
    expect((await ledgerOf(c.agents[0]!.agentId)).quotaBytes).toBe(20 * MiB);
  });

  it('with no room elsewhere, evicts datasets whose source still answers', async () => {
    const [s1, s2, s3] = await Promise.all(c.agents.map((a) => settingsOf(a)));
    const [first, second, third] = c.agents.map((a) => a.agentId);
    // Nobody else can take anything: the first donor gives up its space, the third keeps
    // exactly what it holds.
    await s1!.update({ quotaBytes: 0 });
    const thirdHolds = (await ledgerOf(third!)).usedBytes;
    await s3!.update({ quotaBytes: thirdHolds });
    await waitFor('the manager to see both quotas', async () =>
      (await ledgerOf(first!)).quotaBytes === 0 &&
      (await ledgerOf(third!)).quotaBytes === thirdHolds
        ? true
        : undefined,
    );
    const held = (await ledgerOf(second!)).usedBytes;
    expect(held).toBeGreaterThan(0);
    const cut = await s2!.update({ quotaBytes: 0 });
    expect(cut.relocation).toMatchObject({ state: 'done', totalBytes: 0, unplacedBytes: 0 });
    expect(cut.relocation.evicted).toBeGreaterThan(0);
    // The evicted datasets are deleted from the cache (their sources still have every byte)…
    await waitFor(
      'the second donor to drop what it held',
      async () => ((await s2!.state()).quota.usedBytes === 0 ? true : undefined),
      60_000,
      200,
    );
    // The ledger follows once the donor reports its delete jobs done (just after it deleted).
    await waitFor('the manager to free the second donor', async () =>
      (await ledgerOf(second!)).usedBytes === 0 ? true : undefined,
    );
    // …and can be imported again from them.
    await s1!.update({ quotaBytes: 20 * MiB });
    const again = await c.importAndWait({ uri: sources[0]!.url, name: 'reloc/again.bin' });
    expect(again.state).toBe('ready');
    expect((await c.get('reloc/again.bin')).sha256).toBe(sha256Hex(sources[0]!.content));
  }, 180_000);
});
