import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB, type DatasetMap, type ImportResponse } from '@freeloader/protocol';
import { auditReplicas, tallyCopies } from '@freeloader/striping';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { startHarness, type Harness } from '../test/harness.js';

// Real PostgreSQL and a real HTTP source; three enrolled donors (live by their enrolment) that
// never run their jobs: what is checked is the plan, the map, the reservations and the views.
let h: Harness;
let src: TestServer;
let user: { authorization: string };
const donors: string[] = [];
const MORSELS = 9;

beforeAll(async () => {
  h = await startHarness();
  src = await startTestServer({ size: MORSELS * MiB - 7 });
  for (const name of ['r1', 'r2', 'r3']) {
    donors.push((await h.enroll({ name, quotaBytes: 64 * MiB })).agentId);
  }
  user = await h.login('scientist');
});
afterAll(async () => {
  await h?.close();
  await src?.close();
});

const importOf = (payload: object) =>
  h.call({
    method: 'POST',
    url: '/api/v1/datasets',
    headers: user,
    payload: { uri: src.url, ...payload },
  });

async function reservedPerDonor(datasetId: string): Promise<Map<string, number>> {
  const { rows } = await h.app.pg.query<{ agent_id: string; bytes: number }>(
    `SELECT agent_id::text, sum(bytes)::bigint AS bytes FROM reservations
     WHERE dataset_id = $1 AND state = 'active' GROUP BY agent_id`,
    [datasetId],
  );
  return new Map(rows.map((r) => [r.agent_id, Number(r.bytes)]));
}

describe('replication level n on import', () => {
  it('places two copies by default, on distinct donors, and reserves every copy', async () => {
    const res = await importOf({ name: 'rep/default.bin' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json<ImportResponse>();
    expect(body.plan).toMatchObject({ replicas: 2, placedCopies: 2 });
    expect(body.plan.replicasReason).toMatch(/REPLICAS_DEFAULT=2/);
    const id = body.dataset!.id;
    const map = (
      await h.call({ method: 'GET', url: `/api/v1/datasets/${id}/map`, headers: user })
    ).json<DatasetMap>();
    expect(new Set(map.extents.map((e) => e.copy))).toEqual(new Set([0, 1]));
    auditReplicas(map.extents, MORSELS, 2);
    const tally = tallyCopies(map.extents);
    const reserved = await reservedPerDonor(id);
    expect(Object.fromEntries(reserved)).toEqual(
      Object.fromEntries([...tally].map(([d, n]) => [d, n * MiB])),
    );
    expect([...reserved.values()].reduce((a, b) => a + b, 0)).toBe(2 * MORSELS * MiB);

    const view = (
      await h.call({ method: 'GET', url: `/api/v1/datasets/${id}`, headers: user })
    ).json();
    expect(view).toMatchObject({
      replicas: 2,
      availabilityTarget: null,
      health: { wanted: 2, morsels: MORSELS, liveMin: 2, liveAvg: 2, atRisk: 0, sourceOnly: 0 },
    });
  });

  it('places as many copies as there are donors and shows the dataset under-replicated', async () => {
    const res = await importOf({ name: 'rep/five.bin', replicas: 5 });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json<ImportResponse>();
    expect(body.plan).toMatchObject({ replicas: 5, placedCopies: 3 });
    const listing = (
      await h.call({ method: 'GET', url: '/api/v1/namespace?path=rep', headers: user })
    ).json<{ datasets: Array<{ path: string; health: object }> }>();
    expect(listing.datasets.find((d) => d.path === 'rep/five.bin')!.health).toMatchObject({
      wanted: 5,
      liveMin: 3,
      atRisk: MORSELS,
      sourceOnly: 0,
    });
  });

  it('counts a copy listed in morsel_faults as not live', async () => {
    const res = await importOf({ name: 'rep/faulty.bin', replicas: 2 });
    const id = res.json<ImportResponse>().dataset!.id;
    const map = (
      await h.call({ method: 'GET', url: `/api/v1/datasets/${id}/map`, headers: user })
    ).json<DatasetMap>();
    const copy1 = map.extents.find((e) => e.copy === 1 && e.first === 0)!;
    await h.app.pg.query(
      `INSERT INTO morsel_faults (dataset_id, copy, morsel, agent_id, reason, reported_by)
       VALUES ($1, 1, 0, $2, 'corrupt', 'scrub')`,
      [id, copy1.donors[copy1.phase % copy1.donors.length]],
    );
    const [found] = (
      await h.call({ method: 'GET', url: '/api/v1/datasets?query=rep/faulty', headers: user })
    ).json<Array<{ health: object }>>();
    expect(found!.health).toMatchObject({ liveMin: 1, atRisk: 1, sourceOnly: 0 });
  });

  it('turns an availability target into n with the model and says why', async () => {
    const res = await importOf({ name: 'rep/avail.bin', availability: 0.999, dryRun: true });
    expect(res.statusCode, res.body).toBe(200);
    const plan = res.json<ImportResponse>().plan;
    expect(plan.replicas).toBeGreaterThanOrEqual(1);
    expect(plan.replicasReason).toMatch(
      /availability 0\.999: \d+ cop.*ThriftStore model.*model default/,
    );
    const real = await importOf({ name: 'rep/avail.bin', availability: 0.999 });
    expect(real.statusCode, real.body).toBe(201);
    expect(real.json<ImportResponse>().dataset).toMatchObject({
      replicas: plan.replicas,
      availabilityTarget: 0.999,
    });
  });

  it.each([
    [{ replicas: 2, availability: 0.99 }, /either replicas .* or availability/],
    [{ replicas: 0 }, /replicas/],
    [{ replicas: 17 }, /replicas/],
    [{ availability: 1 }, /availability/],
  ])('rejects %o with 400', async (payload, message) => {
    const res = await importOf({ name: 'rep/bad.bin', ...payload });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error.message).toMatch(message);
  });
});
