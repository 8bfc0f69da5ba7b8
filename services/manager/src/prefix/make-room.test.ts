import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { runDeleteJobs } from '../test/donor-jobs.js';
import { startHarness, type Harness } from '../test/harness.js';
import { addFree, chooseRoom, type ExtraFree } from './make-room.js';

describe('chooseRoom', () => {
  // A cache of donors a, b with `free` bytes each; an import of n bytes fits when every donor
  // can take n / 2 (the shape of a two-wide round-robin placement).
  const fitsWith =
    (free: number, asked: Array<[number, number]> = []) =>
    async (bytes: number, extra: ExtraFree) => {
      const ok = ['a', 'b'].every((d) => free + (extra.get(d) ?? 0) >= bytes / 2);
      asked.push([bytes, [...extra.values()].reduce((s, v) => s + v, 0)]);
      return ok;
    };
  // Step k frees 2 on each donor: freedAfter[k] = 2k per donor.
  const steps = (n: number) =>
    Array.from(
      { length: n + 1 },
      (_, k) =>
        new Map([
          ['a', 2 * k],
          ['b', 2 * k],
        ]),
    );
  const ext = new Map([['a', 3]]);

  it.each<
    [
      string,
      Parameters<typeof chooseRoom>[0] extends infer I ? Omit<I, 'fits'> : never,
      number,
      object | null,
    ]
  >([
    [
      'whole fits once extensions are abandoned: no eviction',
      {
        whole: 10,
        target: 4,
        extensions: new Map([
          ['a', 1],
          ['b', 1],
        ]),
        freedAfter: steps(3),
      },
      4,
      { cacheBytes: 10, abandonExtensions: true, steps: 0 },
    ],
    [
      'the prefix fits as is: nothing is cut',
      { whole: 20, target: 8, extensions: ext, freedAfter: steps(3) },
      4,
      { cacheBytes: 8, abandonExtensions: false, steps: 0 },
    ],
    [
      'the fewest steps that make the prefix fit',
      { whole: 40, target: 16, extensions: new Map(), freedAfter: steps(5) },
      4,
      { cacheBytes: 16, abandonExtensions: false, steps: 2 },
    ],
    [
      'extensions go before any cached data',
      {
        whole: 40,
        target: 16,
        extensions: new Map([
          ['a', 4],
          ['b', 4],
        ]),
        freedAfter: steps(5),
      },
      4,
      { cacheBytes: 16, abandonExtensions: true, steps: 0 },
    ],
    [
      'no range support: the whole dataset or nothing',
      { whole: 20, target: 20, extensions: new Map(), freedAfter: steps(2) },
      4,
      null,
    ],
    [
      'no range support, and everything evicted makes it fit: all steps',
      { whole: 20, target: 20, extensions: new Map(), freedAfter: steps(3) },
      4,
      { cacheBytes: 20, abandonExtensions: false, steps: 3 },
    ],
    [
      'nothing cached to evict and no room',
      { whole: 20, target: 12, extensions: new Map(), freedAfter: steps(0) },
      4,
      null,
    ],
  ])('%s', async (_name, input, free, expected) => {
    expect(await chooseRoom({ ...input, fits: fitsWith(free) })).toEqual(expected);
  });

  it('bisects: a few dry runs, not one per step', async () => {
    const asked: Array<[number, number]> = [];
    const got = await chooseRoom({
      whole: 400,
      target: 200,
      extensions: new Map(),
      freedAfter: steps(100),
      fits: fitsWith(4, asked),
    });
    // 4 + 2k ≥ 100 → k = 48.
    expect(got).toEqual({ cacheBytes: 200, abandonExtensions: false, steps: 48 });
    expect(asked.length).toBeLessThanOrEqual(10);
  });

  it('adds per-donor space', () => {
    expect(
      addFree(
        new Map([['a', 1]]),
        new Map([
          ['a', 2],
          ['b', 3],
        ]),
      ),
    ).toEqual(
      new Map([
        ['a', 3],
        ['b', 3],
      ]),
    );
  });
});

// The data-loss case of issue 18 on a real manager, a real HTTP source and real PostgreSQL,
// scaled down: three live donors of 8 MiB, a ready dataset `demo/big.bin` of 6 MiB cached on
// them (18 MiB free), and imports from a server without Range support.
describe('an import that cannot fit evicts nothing', () => {
  let h: Harness;
  let user: string;
  let donors: Array<{ agentId: string; auth: string }>;
  const servers: TestServer[] = [];
  const SOURCE = 'http://demo.test:1';

  beforeAll(async () => {
    h = await startHarness();
    user = (await h.login()).authorization;
    donors = [];
    for (let i = 0; i < 3; i++) donors.push(await h.enroll({ quotaBytes: 8 * MiB }));
    // The model prefix of big.bin is half of it: it is over-cached and so trimmable.
    await h.app.prefixCache.sources.observe(SOURCE, { patchRate: 50e6, latencyS: 0 });
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    await h?.close();
  });
  beforeEach(async () => {
    for (const t of ['jobs', 'datasets', 'reservations', 'cache_evictions']) {
      await h.app.pg.query(`DELETE FROM ${t}`);
    }
    await h.app.pg.query('UPDATE agents SET used_bytes = 0');
  });

  /** demo/big.bin: 6 MiB, all cached, two morsels committed on each donor. */
  async function bigBin(): Promise<string> {
    const d = await h.app.namespaceRepo.createDataset({
      path: 'demo/big.bin',
      sourceUri: `${SOURCE}/big.bin`,
      sizeBytes: 6 * MiB,
      state: 'ready',
    });
    await h.app.pg.query('UPDATE datasets SET cached_bytes = $2 WHERE id = $1', [d.id, 6 * MiB]);
    const ids = donors.map((x) => x.agentId);
    await h.app.placementRepo.setPlacement(d.id, [
      { copy: 0, first: 0, count: 6, unit: 1, phase: 0, donors: ids },
    ]);
    for (const agentId of ids) {
      const r = await h.app.reservationsRepo.reserve({ agentId, bytes: 2 * MiB, datasetId: d.id });
      await h.app.reservationsRepo.commit(r.id);
    }
    return d.id;
  }

  async function snapshot(id: string) {
    const { rows } = await h.app.pg.query<{ cached_bytes: number; state: string }>(
      'SELECT cached_bytes, state FROM datasets WHERE id = $1',
      [id],
    );
    const extents = await h.app.placementRepo.getPlacement(id);
    const used = await h.app.pg.query<{ used: string }>(
      'SELECT sum(used_bytes)::bigint AS used FROM agents',
    );
    const cuts = await h.app.pg.query('SELECT kind, bytes FROM cache_evictions');
    const deletes = await h.app.pg.query(`SELECT 1 FROM jobs WHERE kind = 'delete'`);
    return {
      ...rows[0],
      placed: extents.reduce((s, e) => s + e.count, 0),
      usedMiB: Number(used.rows[0]!.used) / MiB,
      cuts: cuts.rows,
      deletes: deletes.rowCount,
    };
  }

  async function serve(size: number): Promise<string> {
    const server = await startTestServer({ size, ranges: false });
    servers.push(server);
    return server.url;
  }

  const importOf = (uri: string, name: string) =>
    h.call({
      method: 'POST',
      url: '/api/v1/datasets',
      headers: { authorization: user },
      payload: { uri, name },
    });

  it('answers NO_SPACE without trimming or evicting demo/big.bin', async () => {
    const big = await bigBin();
    const before = await snapshot(big);
    expect(before).toMatchObject({ cached_bytes: 6 * MiB, placed: 6, usedMiB: 6, deletes: 0 });
    // 40 MiB without Range support: even all of the 24 MiB cache could not hold it.
    const res = await importOf(`${await serve(40 * MiB)}/huge.bin`, 'big/huge-norange.bin');
    expect(res.statusCode).toBe(507);
    expect(res.json()).toMatchObject({ error: { code: 'NO_SPACE' } });
    expect(res.json().error.message).toMatch(/nothing was evicted/);
    expect(await snapshot(big)).toEqual(before);
    const { rows } = await h.app.pg.query(`SELECT 1 FROM datasets WHERE source_uri LIKE '%huge%'`);
    expect(rows).toHaveLength(0);
  });

  it('a dry run that would need eviction cuts nothing', async () => {
    const big = await bigBin();
    const before = await snapshot(big);
    const res = await h.call({
      method: 'POST',
      url: '/api/v1/datasets',
      headers: { authorization: user },
      payload: { uri: `${await serve(20 * MiB)}/fits.bin`, name: 'dry/fits.bin', dryRun: true },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ dataset: null, plan: { morsels: 20 } });
    expect(await snapshot(big)).toEqual(before);
  });

  it('evicts only as much as an import that then proceeds needs', async () => {
    const big = await bigBin();
    // 20 MiB without ranges: 18 MiB free, so big.bin is trimmed to its 3 MiB prefix, not evicted.
    const res = await runDeleteJobs(
      h,
      donors,
      importOf(`${await serve(20 * MiB)}/fits.bin`, 'big/fits.bin'),
    );
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ dataset: { state: 'importing' } });
    const after = await snapshot(big);
    expect(after).toMatchObject({ cached_bytes: 3 * MiB, placed: 3, state: 'ready' });
    expect(after.cuts).toEqual([{ kind: 'trim', bytes: 3 * MiB }]);
  });
});
