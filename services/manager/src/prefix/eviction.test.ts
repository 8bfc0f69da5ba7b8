import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { startHarness, type Harness } from '../test/harness.js';
import { evictBytes, watermarkSweep } from './eviction.js';

// Real PostgreSQL: datasets with placement over two donors and committed reservations, a source
// whose model prefix is half of each dataset (R_patch 50e6, L 0, default R_client 100e6).
let h: Harness;
let donors: string[];
const SOURCE = 'http://src.test:1';

beforeAll(async () => {
  h = await startHarness();
  donors = [
    (await h.enroll({ quotaBytes: 20 * MiB })).agentId,
    (await h.enroll({ quotaBytes: 20 * MiB })).agentId,
  ];
  await h.app.prefixCache.sources.observe(SOURCE, { patchRate: 50e6, latencyS: 0 });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(async () => {
  await h.app.pg.query('DELETE FROM datasets');
  await h.app.pg.query('DELETE FROM reservations');
  await h.app.pg.query('DELETE FROM cache_evictions');
  await h.app.pg.query('UPDATE agents SET used_bytes = 0');
});

interface Spec {
  /** MiB cached of a 10 MiB dataset. */
  cached: number;
  /** Seconds since the last read. */
  ago: number;
  pinned?: boolean;
}

async function addDataset(name: string, spec: Spec): Promise<string> {
  const d = await h.app.namespaceRepo.createDataset({
    path: `evict/${name}`,
    sourceUri: `${SOURCE}/${name}.bin`,
    sizeBytes: 10 * MiB,
    state: 'ready',
  });
  await h.app.pg.query(
    `UPDATE datasets SET cached_bytes = $2, pinned = $3,
       last_access_at = now() - make_interval(secs => $4) WHERE id = $1`,
    [d.id, spec.cached * MiB, spec.pinned ?? false, spec.ago],
  );
  if (spec.cached > 0) {
    await h.app.placementRepo.setPlacement(d.id, [
      { copy: 0, first: 0, count: spec.cached, unit: 1, phase: 0, donors },
    ]);
    // Morsels alternate between the two donors: each holds its share, committed.
    const shares = [Math.ceil(spec.cached / 2), Math.floor(spec.cached / 2)];
    for (const [i, agentId] of donors.entries()) {
      if (shares[i] === 0) continue;
      const r = await h.app.reservationsRepo.reserve({
        agentId,
        bytes: shares[i]! * MiB,
        datasetId: d.id,
      });
      await h.app.reservationsRepo.commit(r.id);
    }
  }
  return d.id;
}

async function state(ids: Record<string, string>) {
  const out: Record<string, number> = {};
  for (const [name, id] of Object.entries(ids)) {
    const d = await h.app.namespaceRepo.get(id);
    out[name] = d!.cachedBytes / MiB;
    const extents = await h.app.placementRepo.getPlacement(id);
    // Placement always describes exactly the cached morsels.
    expect(extents.reduce((s, e) => s + e.count, 0)).toBe(out[name]);
  }
  return out;
}

async function usedMiB(): Promise<number> {
  const { rows } = await h.app.pg.query<{ used: number }>(
    'SELECT sum(used_bytes)::bigint AS used FROM agents',
  );
  return rows[0]!.used / MiB;
}

describe('evictBytes (seed 002 §4.1 on the real schema)', () => {
  it.each<[string, Record<string, Spec>, number, string[], Record<string, number>]>([
    [
      'trims the least recently used over-cached dataset first',
      { old: { cached: 10, ago: 300 }, recent: { cached: 10, ago: 10 } },
      4,
      ['trim old 5'],
      { old: 5, recent: 10 },
    ],
    [
      'trims every over-cached dataset before evicting any',
      { a: { cached: 10, ago: 300 }, b: { cached: 5, ago: 400 }, c: { cached: 10, ago: 100 } },
      8,
      ['trim a 5', 'trim c 5'],
      { a: 5, b: 5, c: 5 },
    ],
    [
      'then evicts whole prefixes, least recently used first',
      { a: { cached: 5, ago: 100 }, b: { cached: 5, ago: 300 }, c: { cached: 4, ago: 200 } },
      7,
      ['evict b 0', 'evict c 0'],
      { a: 5, b: 0, c: 0 },
    ],
    [
      'never touches a pinned dataset, even when that leaves the need unmet',
      { pinned: { cached: 10, ago: 900, pinned: true }, b: { cached: 10, ago: 10 } },
      15,
      ['trim b 5', 'evict b 0'],
      { pinned: 10, b: 0 },
    ],
  ])('%s', async (_name, specs, needMiB, steps, after) => {
    const ids: Record<string, string> = {};
    for (const [name, spec] of Object.entries(specs)) ids[name] = await addDataset(name, spec);
    const names = new Map(Object.entries(ids).map(([n, id]) => [id, n]));
    const usedBefore = await usedMiB();

    const cuts = await evictBytes(h.app, needMiB * MiB);
    expect(cuts.map((c) => `${c.kind} ${names.get(c.datasetId)} ${c.toBytes / MiB}`)).toEqual(
      steps,
    );
    expect(await state(ids)).toEqual(after);
    // The donors' ledger gives back exactly what was cut …
    const freed = cuts.reduce((s, c) => s + c.freedBytes, 0) / MiB;
    expect(await usedMiB()).toBe(usedBefore - freed);
    // … each cut is recorded, and every donor losing morsels gets a delete job from the cut on.
    const { rows: log } = await h.app.pg.query<{ n: number; bytes: number }>(
      'SELECT count(*)::int AS n, coalesce(sum(bytes), 0)::bigint AS bytes FROM cache_evictions',
    );
    expect(log[0]).toEqual({ n: cuts.length, bytes: freed * MiB });
    const seen = new Map<string, number>();
    for (const cut of cuts) {
      // A dataset cut twice (trimmed, then evicted) has its jobs in that order.
      const { rows: jobs } = await h.app.pg.query<{ agent_id: string; payload: object }>(
        `SELECT agent_id, payload FROM jobs WHERE kind = 'delete' AND dataset_id = $1
           AND state = 'queued' ORDER BY created_at, agent_id OFFSET $2 LIMIT $3`,
        [cut.datasetId, seen.get(cut.datasetId) ?? 0, cut.perDonor.size],
      );
      seen.set(cut.datasetId, (seen.get(cut.datasetId) ?? 0) + cut.perDonor.size);
      expect(jobs.map((j) => j.agent_id).sort()).toEqual([...cut.perDonor.keys()].sort());
      const payload = cut.toBytes === 0 ? {} : { fromMorsel: cut.toBytes / MiB };
      for (const j of jobs) expect(j.payload).toEqual({ datasetId: cut.datasetId, ...payload });
    }
  });
});

describe('watermarkSweep', () => {
  it('does nothing under the high watermark and evicts down to the low one above it', async () => {
    // 40 MiB donated; 35 MiB cached is 87.5 %: under the 90 % high watermark.
    const a = await addDataset('a', { cached: 10, ago: 500 });
    await addDataset('b', { cached: 10, ago: 400 });
    await addDataset('c', { cached: 10, ago: 300 });
    const d = await addDataset('d', { cached: 5, ago: 200 });
    expect(await watermarkSweep(h.app)).toEqual([]);
    // 38 MiB is 95 %: free down to 75 % (30 MiB), i.e. 8 MiB — two trims of 5 MiB.
    await h.app.pg.query('DELETE FROM datasets WHERE id = $1', [d]);
    await h.app.pg.query('UPDATE agents SET used_bytes = used_bytes - $1', [2.5 * MiB]);
    await addDataset('e', { cached: 8, ago: 100 });
    const cuts = await watermarkSweep(h.app);
    expect(cuts.map((c) => c.kind)).toEqual(['trim', 'trim']);
    expect(cuts[0]!.datasetId).toBe(a);
    expect(await usedMiB()).toBe(28);
  });
});
