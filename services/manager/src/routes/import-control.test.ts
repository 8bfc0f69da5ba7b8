import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { startHarness, type Harness } from '../test/harness.js';

// Real PostgreSQL, a real HTTP source and enrolled donors: imports are placed, reserved and
// queued for real; the donors never claim, so each import stays `importing` until cancelled.
let h: Harness;
let src: TestServer;
let alice: { authorization: string; userId: string };
let bob: { authorization: string; userId: string };
let admin: { authorization: string; userId: string };
const donors: string[] = [];
const credentials = new Map<string, string>();

beforeAll(async () => {
  h = await startHarness();
  src = await startTestServer({ size: 4 * MiB + 5 });
  alice = await h.login('scientist');
  bob = await h.login('scientist');
  admin = await h.login('admin');
  for (const name of ['d1', 'd2']) {
    const agent = await h.enroll({ name, quotaBytes: 64 * MiB });
    donors.push(agent.agentId);
    credentials.set(agent.agentId, agent.auth);
  }
});
afterAll(async () => {
  await h?.close();
  await src?.close();
});

const post = (url: string, who: { authorization: string }, payload?: object) =>
  h.call({ method: 'POST', url, headers: who, ...(payload ? { payload } : {}) });

async function importAs(who: { authorization: string }, name: string): Promise<string> {
  const res = await post('/api/v1/datasets', who, { uri: src.url, name });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().dataset.id;
}

async function reservedFor(datasetId: string): Promise<number> {
  const { rows } = await h.app.pg.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM reservations WHERE dataset_id = $1 AND state = 'active'`,
    [datasetId],
  );
  return rows[0]!.n;
}

describe('cancel', () => {
  it('lets the starter cancel: jobs cancelled, reservations released, dataset failed', async () => {
    const id = await importAs(alice, 'ctl/cancel-me.bin');
    expect(await reservedFor(id)).toBeGreaterThan(0);
    const res = await post(`/api/v1/datasets/${id}/cancel`, alice);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ datasetId: id, state: 'failed' });
    const d = await h.app.namespaceRepo.get(id);
    expect(d).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/^cancelled by scientist-/),
    });
    expect(await reservedFor(id)).toBe(0);
    const { rows } = await h.app.pg.query<{ state: string }>(
      `SELECT DISTINCT state FROM jobs WHERE dataset_id = $1 AND kind = 'import'`,
      [id],
    );
    expect(rows.map((r) => r.state)).toEqual(['cancelled']);
    // Cancelling twice is a conflict, not a silent success.
    expect((await post(`/api/v1/datasets/${id}/cancel`, alice)).statusCode).toBe(409);
  });

  it('answers other scientists as for a missing dataset but lets an admin cancel', async () => {
    const id = await importAs(alice, 'ctl/not-bobs.bin');
    const denied = await post(`/api/v1/datasets/${id}/cancel`, bob);
    expect(denied.statusCode).toBe(404);
    expect(denied.json().error.code).toBe('DATASET_NOT_FOUND');
    expect((await h.app.namespaceRepo.get(id))!.state).toBe('importing');
    expect((await post(`/api/v1/datasets/${id}/cancel`, admin)).statusCode).toBe(200);
  });

  it('answers 404 for an unknown dataset, 400 for a bad id, 401 without a session', async () => {
    expect(
      (await post('/api/v1/datasets/00000000-0000-4000-8000-000000000000/cancel', alice))
        .statusCode,
    ).toBe(404);
    expect((await post('/api/v1/datasets/nope/cancel', alice)).statusCode).toBe(400);
    expect(
      (
        await h.call({
          method: 'POST',
          url: '/api/v1/datasets/00000000-0000-4000-8000-000000000000/cancel',
        })
      ).statusCode,
    ).toBe(401);
  });
});

describe('retry and failed attempts', () => {
  it('re-queues a failed import under the same path and keeps its failed attempts', async () => {
    const id = await importAs(alice, 'ctl/retry-me.bin');
    // One donor fails its job: the import fails like any import.
    const [job] = await h.app.jobsRepo.claim(donors[0]!, { max: 1, kinds: ['import'] });
    expect(job).toBeDefined();
    const finish = await h.call({
      method: 'POST',
      url: `/api/v1/jobs/${job!.id}/finish`,
      headers: { authorization: credentials.get(donors[0]!)! },
      payload: { state: 'failed', error: 'disk on fire' },
    });
    expect(finish.statusCode, finish.body).toBe(200);
    await waitFor(async () => (await h.app.namespaceRepo.get(id))?.state === 'failed');

    const failures = await h.call({
      method: 'GET',
      url: `/api/v1/transfers/failures?datasetId=${id}`,
      headers: alice,
    });
    expect(failures.statusCode).toBe(200);
    expect(failures.json()).toEqual([
      expect.objectContaining({
        jobId: job!.id,
        agentName: 'd1',
        datasetPath: 'ctl/retry-me.bin',
        error: 'disk on fire',
      }),
    ]);

    expect((await post(`/api/v1/datasets/${id}/retry`, bob)).statusCode).toBe(404);
    const res = await post(`/api/v1/datasets/${id}/retry`, alice);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ state: 'importing', previousDatasetId: id });
    const again = await h.app.namespaceRepo.get(body.datasetId);
    expect(again).toMatchObject({ path: 'ctl/retry-me.bin', state: 'importing' });
    expect(await reservedFor(body.datasetId)).toBeGreaterThan(0);
    // The earlier failure is listed under the new dataset; the retry is the starter's again.
    const after = await h.call({
      method: 'GET',
      url: `/api/v1/transfers/failures?datasetId=${body.datasetId}`,
      headers: alice,
    });
    expect(after.json()).toEqual([
      expect.objectContaining({ jobId: job!.id, datasetId: body.datasetId, agentName: 'd1' }),
    ]);
    // The new dataset's transfers are its own: the failed attempt is not mixed into them.
    const transfers = await h.call({
      method: 'GET',
      url: `/api/v1/transfers?datasetId=${body.datasetId}`,
      headers: alice,
    });
    expect(transfers.json().map((t: { jobId: string }) => t.jobId)).not.toContain(job!.id);
    expect((await post(`/api/v1/datasets/${body.datasetId}/cancel`, alice)).statusCode).toBe(200);
    // Only a failed import can be retried.
    expect((await post(`/api/v1/datasets/${body.datasetId}/cancel`, alice)).statusCode).toBe(409);
  });

  it('leaves the path failed with the reason when the retry cannot start', async () => {
    const id = await importAs(alice, 'ctl/source-gone.bin');
    await post(`/api/v1/datasets/${id}/cancel`, alice);
    await h.app.pg.query(
      `UPDATE datasets SET source_uri = 'http://127.0.0.1:9/gone' WHERE id = $1`,
      [id],
    );
    const res = await post(`/api/v1/datasets/${id}/retry`, alice);
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    const left = await h.app.namespaceRepo.getByPath('ctl/source-gone.bin');
    expect(left).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/^retry failed: /),
    });
    // Still the starter's: she may retry it again; to bob it is as if not there.
    expect((await post(`/api/v1/datasets/${left!.id}/retry`, bob)).statusCode).toBe(404);
  });
});

describe('principals', () => {
  it('names users and agents by id for any signed-in user', async () => {
    const res = await h.call({ method: 'GET', url: '/api/v1/principals', headers: bob });
    expect(res.statusCode).toBe(200);
    const byId = new Map(
      res.json<{ id: string; name: string; kind: string }[]>().map((p) => [p.id, p]),
    );
    expect(byId.get(donors[0]!)).toMatchObject({ name: 'd1', kind: 'agent' });
    expect(byId.get(alice.userId)).toMatchObject({ kind: 'user' });
    expect((await h.call({ method: 'GET', url: '/api/v1/principals' })).statusCode).toBe(401);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
