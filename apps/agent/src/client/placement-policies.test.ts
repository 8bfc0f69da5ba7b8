import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MiB,
  donorsOfMorsel,
  type AgentView,
  type DatasetMap,
  type ImportResponse,
  type PlacementPolicy,
} from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { waitFor } from '../test/cluster-harness.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';

// Every placement policy end to end: real manager, four real agent processes, a real HTTP
// source; each import is read back and compared byte for byte with the source.
let c: DataCluster;
let src: TestServer;
let agents: AgentView[];
const MORSELS = 17;

beforeAll(async () => {
  c = await startDataCluster(4, '96MiB');
  src = await startTestServer({ size: 16 * MiB + 11, seed: 66 });
  // Each agent measures its disk and network once it has joined, then reports it.
  agents = await waitFor(
    'join diagnostics from every agent',
    async () => {
      const list = await c.tm.admin.request<AgentView[]>('GET', '/agents');
      return list.every((a) => a.diagnostics) ? list : undefined;
    },
    60_000,
    200,
  );
}, 180_000);

afterAll(async () => {
  await src?.close();
  await c?.close();
});

/** Morsels per donor in a dataset's primary copy, from its map. */
async function holdings(datasetId: string): Promise<{ map: DatasetMap; per: Map<string, number> }> {
  const map = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${datasetId}/map`);
  const morsels = Math.ceil(map.dataset.sizeBytes / map.dataset.morselSize);
  const per = new Map<string, number>();
  for (let m = 0; m < morsels; m++) {
    const [d] = donorsOfMorsel(map.extents, m);
    per.set(d!, (per.get(d!) ?? 0) + 1);
  }
  return { map, per };
}

describe('placement policies end to end', { timeout: 180_000 }, () => {
  it('agents report their join-time disk and network rates', () => {
    for (const a of agents) {
      expect(a.diagnostics!.diskReadRate).toBeGreaterThan(1e6);
      expect(a.diagnostics!.downloadRate).toBeGreaterThan(1e6);
      expect(a.diagnostics!.uploadRate).toBeGreaterThan(1e6);
    }
  });

  it('round-robin by default before any read, then predictive once rates are known', async () => {
    const first = await c.importAndWait({ uri: src.url, name: 'pol/first.bin' });
    expect(first).toMatchObject({ state: 'ready', policy: 'round-robin' });
    const out = await c.get(first.id);
    expect(out.sha256).toBe(sha256Hex(src.content));
    // That read reported per-donor rates: the next default import is predictive.
    const second = await c.importAndWait({ uri: src.url, name: 'pol/second.bin' });
    expect(second).toMatchObject({ state: 'ready', policy: 'predictive' });
    expect((await c.get(second.id)).sha256).toBe(sha256Hex(src.content));
    const { map, per } = await holdings(second.id);
    expect([...per.values()].reduce((a, b) => a + b, 0)).toBe(MORSELS);
    // The map tells the reader how fast each donor was for this client.
    expect(map.donors.every((d) => (d.rate ?? 0) > 0)).toBe(true);
  });

  it.each<[PlacementPolicy, Record<string, unknown>]>([
    ['predictive', { width: 4 }],
    ['asymmetric', {}],
    ['asymmetric', { localShare: 0.5 }],
  ])('imports with %s %o and reads it back byte-identical', async (policy, extra) => {
    const host = agents[0]!.id;
    const name = `pol/${policy}-${Object.keys(extra).join('-') || 'default'}.bin`;
    const req = {
      uri: src.url,
      name,
      policy,
      ...(policy === 'asymmetric' ? { hostAgentId: host } : {}),
      ...extra,
    };
    const plan = await c.tm.admin.request<ImportResponse>('POST', '/datasets', {
      ...req,
      name: `${name}.dry`,
      dryRun: true,
    });
    expect(plan.plan.policy).toBe(policy);
    const d = await c.importAndWait(req);
    expect(d).toMatchObject({ state: 'ready', policy });
    expect((await c.get(d.id)).sha256).toBe(sha256Hex(src.content));
    const { per } = await holdings(d.id);
    if (policy === 'asymmetric') {
      const share = (per.get(host) ?? 0) / MORSELS;
      expect(share).toBeGreaterThan(0);
      // Placement is in whole morsels: the host holds the plan's share rounded to one of 17.
      expect(Math.abs(share - plan.plan.localShare!) * MORSELS).toBeLessThanOrEqual(1);
      if (extra.localShare) expect(share).toBeCloseTo(0.5, 1);
      // The host's morsels are scattered through the file, not bunched at one end.
      const map = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${d.id}/map`);
      const local = Array.from({ length: MORSELS }, (_, m) => m).filter(
        (m) => donorsOfMorsel(map.extents, m)[0] === host,
      );
      expect(local[0]!).toBeLessThan(MORSELS / 2);
      expect(local.at(-1)!).toBeGreaterThanOrEqual(MORSELS / 2);
    }
  });

  it('asymmetric needs a host agent', async () => {
    await expect(
      c.tm.admin.request('POST', '/datasets', { uri: src.url, policy: 'asymmetric', dryRun: true }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});
