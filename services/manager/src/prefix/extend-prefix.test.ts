import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  MiB,
  morselsOfDonor,
  type CacheStatus,
  type DatasetMap,
  type ImportJobPayload,
  type JobView,
} from '@freeloader/protocol';
import { runDeleteJobs } from '../test/donor-jobs.js';
import { startHarness, type Harness } from '../test/harness.js';
import { placementCandidates, withExtraFree } from '../placement/candidates.js';
import { planPlacement } from '../placement/choose-policy.js';
import { planCached } from '../placement/import-policy.js';
import { trimDataset } from './trim-dataset.js';

// Real PostgreSQL and the real job API: two donors of 20 MiB (90 % watermark: 36 MiB of room),
// a 10 MiB dataset with a 3 MiB prefix. The agents' side of the jobs is played through the
// API (claim, progress with hashes, finish) as the agent daemon does it.
let h: Harness;
let donors: Array<{ agentId: string; auth: string }>;
let user: string;
/** The reading scientist, who owns the test datasets (only readers get maps). */
let userId: string;
const SOURCE = 'http://src.test:1';

beforeAll(async () => {
  h = await startHarness();
  donors = [await h.enroll({ quotaBytes: 20 * MiB }), await h.enroll({ quotaBytes: 20 * MiB })];
  ({ authorization: user, userId } = await h.login());
});
afterAll(async () => {
  await h?.close();
});
beforeEach(async () => {
  await h.app.pg.query('DELETE FROM jobs');
  await h.app.pg.query('DELETE FROM datasets');
  await h.app.pg.query('DELETE FROM reservations');
  await h.app.pg.query('DELETE FROM cache_evictions');
  await h.app.pg.query('UPDATE agents SET used_bytes = 0');
  // Enrolment counts as a sighting, but only for STALE_AFTER_MS: on a busy machine this file
  // outlives it, and a stale donor is no candidate for an extension. Each test's donors are live.
  for (const d of donors) {
    const res = await h.call({
      method: 'POST',
      url: '/api/v1/agents/heartbeat',
      headers: { authorization: d.auth },
      payload: {
        quotaBytes: 20 * MiB,
        usedBytes: 0,
        freeBytes: 1024 * MiB,
        servingRate: 0,
        runningJobs: [],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
  }
});

/** A ready 10 MiB dataset whose first `cached` MiB are placed and committed on both donors. */
async function prefixDataset(name: string, cached = 3, pinned = false): Promise<string> {
  const d = await h.app.namespaceRepo.createDataset({
    path: `extend/${name}`,
    sourceUri: `${SOURCE}/${name}.bin`,
    sizeBytes: 10 * MiB,
    etag: '"v1"',
    state: 'ready',
    ownerId: userId,
  });
  await h.app.pg.query('UPDATE datasets SET cached_bytes = $2, pinned = $3 WHERE id = $1', [
    d.id,
    cached * MiB,
    pinned,
  ]);
  const ids = donors.map((x) => x.agentId);
  await h.app.placementRepo.setPlacement(d.id, [
    { copy: 0, first: 0, count: cached, unit: 1, phase: 0, donors: ids },
  ]);
  for (const [i, agentId] of ids.entries()) {
    const share = i === 0 ? Math.ceil(cached / 2) : Math.floor(cached / 2);
    const r = await h.app.reservationsRepo.reserve({
      agentId,
      bytes: share * MiB,
      datasetId: d.id,
    });
    await h.app.reservationsRepo.commit(r.id);
  }
  await h.app.placementRepo.putMorselHashes(
    d.id,
    Array.from({ length: cached }, (_, index) => ({ index, sha256: digest(index) })),
  );
  return d.id;
}

const digest = (index: number) => createHash('sha256').update(`morsel ${index}`).digest('hex');

/** A client reads the dataset: fetches its map, as `get` and the mount do. */
async function read(id: string): Promise<DatasetMap> {
  const res = await h.call({
    method: 'GET',
    url: `/api/v1/datasets/${id}/map`,
    headers: { authorization: user },
  });
  expect(res.statusCode).toBe(200);
  await h.app.prefixCache.extensions.idle();
  return res.json<DatasetMap>();
}

async function row(id: string) {
  const { rows } = await h.app.pg.query<{
    cached_bytes: number;
    read_count: number;
    extension: { fromBytes: number; toBytes: number } | null;
  }>('SELECT cached_bytes, read_count::int AS read_count, extension FROM datasets WHERE id = $1', [
    id,
  ]);
  const extents = await h.app.placementRepo.getPlacement(id);
  return { ...rows[0]!, placed: extents.reduce((s, e) => s + e.count, 0) };
}

async function reservations(id: string) {
  const { rows } = await h.app.pg.query<{ state: string; bytes: number }>(
    `SELECT state, sum(bytes)::bigint AS bytes FROM reservations WHERE dataset_id = $1
     GROUP BY state ORDER BY state`,
    [id],
  );
  return Object.fromEntries(rows.map((r) => [r.state, r.bytes / MiB]));
}

const jobsOf = async (id: string, kind: string) =>
  (
    await h.app.pg.query<{ agent_id: string; state: string; payload: Record<string, unknown> }>(
      'SELECT agent_id, state, payload FROM jobs WHERE dataset_id = $1 AND kind = $2',
      [id, kind],
    )
  ).rows;

/** Play one donor's import job: claim it, report its morsels' hashes, finish it. */
async function runJob(who: { agentId: string; auth: string }, outcome: 'done' | 'failed') {
  const res = await h.call({
    method: 'POST',
    url: '/api/v1/jobs/claim',
    headers: { authorization: who.auth },
    payload: { kinds: ['import'] },
  });
  const [job] = res.json<JobView[]>();
  const payload = job!.payload as unknown as ImportJobPayload;
  const mine = payload.extents.flatMap((e) => morselsOfDonor(e, who.agentId));
  if (outcome === 'done') {
    const progress = await h.call({
      method: 'POST',
      url: `/api/v1/jobs/${job!.id}/progress`,
      headers: { authorization: who.auth },
      payload: {
        doneBytes: mine.length * MiB,
        hashes: mine.map((index) => ({ index, sha256: digest(index) })),
      },
    });
    expect(progress.statusCode).toBe(200);
  }
  const fin = await h.call({
    method: 'POST',
    url: `/api/v1/jobs/${job!.id}/finish`,
    headers: { authorization: who.auth },
    payload:
      outcome === 'done'
        ? { state: 'done' }
        : { state: 'failed', error: 'the source changed', errorCode: 'SOURCE_CHANGED' },
  });
  expect(fin.statusCode).toBe(200);
  return mine;
}

describe('prefix extension', () => {
  it('counts reads; the third extends the prefix, readable from the old one until it commits', async () => {
    const id = await prefixDataset('popular');
    await read(id);
    await read(id);
    expect(await row(id)).toMatchObject({ read_count: 2, extension: null });
    expect(await jobsOf(id, 'import')).toHaveLength(0);

    await read(id);
    const started = await row(id);
    // All of it fits under the watermark (36 MiB of room); nothing readable changed yet.
    expect(started).toMatchObject({
      read_count: 3,
      cached_bytes: 3 * MiB,
      placed: 3,
      extension: { fromBytes: 3 * MiB, toBytes: 10 * MiB },
    });
    const jobs = await jobsOf(id, 'import');
    expect(jobs.map((j) => j.agent_id).sort()).toEqual(donors.map((d) => d.agentId).sort());
    expect(jobs.every((j) => j.payload.extendsFrom === 3)).toBe(true);
    expect(await reservations(id)).toEqual({ active: 7, committed: 3 });
    // A read meanwhile starts no second extension and still sees the old prefix.
    const during = await read(id);
    expect(during.dataset.cachedBytes).toBe(3 * MiB);
    expect(during.extents).toEqual([expect.objectContaining({ first: 0, count: 3 })]);
    expect(await jobsOf(id, 'import')).toHaveLength(2);

    const first = await runJob(donors[0]!, 'done');
    expect((await row(id)).cached_bytes).toBe(3 * MiB);
    const second = await runJob(donors[1]!, 'done');
    expect([...first, ...second].sort((a, b) => a - b)).toEqual([3, 4, 5, 6, 7, 8, 9]);

    expect(await row(id)).toMatchObject({ cached_bytes: 10 * MiB, placed: 10, extension: null });
    expect(await reservations(id)).toEqual({ committed: 10 });
    const { rows: used } = await h.app.pg.query<{ n: number }>(
      'SELECT sum(used_bytes)::bigint AS n FROM agents',
    );
    expect(used[0]!.n).toBe(10 * MiB);
    const cache = (
      await h.call({ method: 'GET', url: '/api/v1/cache', headers: { authorization: user } })
    ).json<CacheStatus>();
    expect(cache.evictions).toMatchObject({ extensions: 1, extendedBytes: 7 * MiB, trims: 0 });
    expect(cache.datasets.find((d) => d.id === id)).toMatchObject({ reads: 4 });
    expect(cache.datasets.find((d) => d.id === id)?.extendingToBytes).toBeUndefined();
  });

  it('a failed job abandons it: reservations released, partial morsels deleted, old prefix kept', async () => {
    const id = await prefixDataset('changing');
    for (let i = 0; i < 3; i++) await read(id);
    expect((await row(id)).extension).not.toBeNull();
    await runJob(donors[0]!, 'done');
    await runJob(donors[1]!, 'failed');

    expect(await row(id)).toMatchObject({ cached_bytes: 3 * MiB, placed: 3, extension: null });
    expect(await reservations(id)).toEqual({ committed: 3, released: 7 });
    const deletes = await jobsOf(id, 'delete');
    expect(deletes.map((j) => j.agent_id).sort()).toEqual(donors.map((d) => d.agentId).sort());
    expect(deletes.every((j) => j.payload.fromMorsel === 3)).toBe(true);
    // The old prefix is still the dataset's readable part, and no new extension starts while
    // the deletes are pending, though it is read often.
    const map = await read(id);
    expect(map.dataset.cachedBytes).toBe(3 * MiB);
    expect(map.extents).toEqual([expect.objectContaining({ first: 0, count: 3 })]);
    expect(await row(id)).toMatchObject({ read_count: 4, extension: null });
    expect(await jobsOf(id, 'import')).toHaveLength(2);
  });

  it('a trim abandons an extension in flight first', async () => {
    const id = await prefixDataset('trimmed');
    for (let i = 0; i < 3; i++) await read(id);
    expect((await row(id)).extension).not.toBeNull();
    const cut = await trimDataset(h.app, id, MiB);
    expect(cut).toMatchObject({ kind: 'trim', toBytes: MiB });
    expect(await row(id)).toMatchObject({ cached_bytes: MiB, placed: 1, extension: null });
    expect((await jobsOf(id, 'import')).every((j) => j.state === 'cancelled')).toBe(true);
    expect(await reservations(id)).toMatchObject({ committed: 1 });
    expect((await reservations(id)).active).toBeUndefined();
  });

  it('leaves pinned datasets and a cache without room alone', async () => {
    const pinned = await prefixDataset('pinned', 3, true);
    for (let i = 0; i < 3; i++) await read(pinned);
    expect(await row(pinned)).toMatchObject({ read_count: 3, extension: null });

    const full = await prefixDataset('full');
    // Other data fills the cache past the high watermark.
    await h.app.pg.query('UPDATE agents SET used_bytes = used_bytes + $1', [16 * MiB]);
    for (let i = 0; i < 3; i++) await read(full);
    expect(await row(full)).toMatchObject({ read_count: 3, extension: null });
    expect(await jobsOf(full, 'import')).toHaveLength(0);
  });

  // Last: yielding pauses extensions for a minute.
  it('yields its space to an import instead of letting the import evict', async () => {
    const id = await prefixDataset('yielding');
    const other = await prefixDataset('bystander');
    for (let i = 0; i < 3; i++) await read(id);
    expect(await reservations(id)).toEqual({ active: 7, committed: 3 });
    // 40 MiB donated, 6 MiB committed, 7 MiB reserved: 32 MiB fits only without the extension.
    const probe = { uri: `${SOURCE}/big.bin`, size: 32 * MiB, etag: null, lastModified: null };
    const planning = planCached(
      h.app,
      { ...probe, acceptsRanges: true },
      'x',
      MiB,
      async (bytes, extra) =>
        planPlacement(
          h.app,
          bytes,
          { uri: probe.uri },
          withExtraFree(await placementCandidates(h.app), extra),
          'x',
        ),
    );
    // The donors run the delete jobs the abandonment queued, as their daemons would.
    const { cacheBytes } = await runDeleteJobs(h, donors, planning);
    expect(cacheBytes).toBe(32 * MiB);
    expect(await row(id)).toMatchObject({ cached_bytes: 3 * MiB, extension: null });
    expect(await reservations(id)).toEqual({ committed: 3, released: 7 });
    // Nothing was evicted for it, and reads start no extension while the import reserves.
    expect(await row(other)).toMatchObject({ cached_bytes: 3 * MiB });
    const { rows } = await h.app.pg.query('SELECT 1 FROM cache_evictions');
    expect(rows).toHaveLength(0);
    for (let i = 0; i < 3; i++) await read(other);
    expect(await row(other)).toMatchObject({ extension: null });
  });
});
