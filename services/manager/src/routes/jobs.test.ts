import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MIN_MORSEL_SIZE,
  type DeleteJobPayload,
  type FreeLoaderEvent,
  type ImportJobPayload,
} from '@freeloader/protocol';
import { startHarness, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const claim = (auth: string, body: Record<string, unknown> = {}) =>
  h.call({
    method: 'POST',
    url: '/api/v1/jobs/claim',
    headers: { authorization: auth },
    payload: body,
  });

describe('jobs', () => {
  it('never gives one job to two concurrent claimers (FOR UPDATE SKIP LOCKED)', async () => {
    const a = await h.enroll();
    const b = await h.enroll();
    const queued = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        h.app.jobsRepo.enqueue({ kind: 'patch', payload: { i } }),
      ),
    );
    const claimed: string[] = [];
    for (let round = 0; round < 10 && claimed.length < queued.length; round++) {
      const results = await Promise.all(
        [a, b, a, b].map((who) => h.app.jobsRepo.claim(who.agentId, { max: 2, kinds: ['patch'] })),
      );
      for (const jobs of results) claimed.push(...jobs.map((j) => j.id));
    }
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.sort()).toEqual(queued.map((j) => j.id).sort());
  });

  it('claims a job whose row a foreign-key check holds (FOR KEY SHARE), as when units name it', async () => {
    // Repair dispatch once queued a job, woke its agent, then wrote units referencing it: their
    // foreign-key checks hold FOR KEY SHARE on the job row, and a claim that skipped it left the
    // agent waiting out its whole long-poll.
    const a = await h.enroll();
    const job = await h.app.jobsRepo.enqueue({ kind: 'relocate', agentId: a.agentId });
    const holder = await h.app.pg.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM jobs WHERE id = $1 FOR KEY SHARE', [job.id]);
      const claimed = await h.app.jobsRepo.claim(a.agentId, { kinds: ['relocate'] });
      expect(claimed.map((j) => j.id)).toEqual([job.id]);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
  });

  it('gives an agent only its own jobs or unassigned ones, oldest first, up to max', async () => {
    const a = await h.enroll();
    const b = await h.enroll();
    const forB = await h.app.jobsRepo.enqueue({ kind: 'import', agentId: b.agentId });
    const forA1 = await h.app.jobsRepo.enqueue({
      kind: 'import',
      agentId: a.agentId,
      totalBytes: 100,
    });
    const forA2 = await h.app.jobsRepo.enqueue({ kind: 'import', agentId: a.agentId });
    const res = await claim(a.auth, { kinds: ['import'], max: 5 });
    expect(res.statusCode).toBe(200);
    const jobs = res.json();
    expect(jobs.map((j: { id: string }) => j.id)).toEqual([forA1.id, forA2.id]);
    expect(jobs[0]).toMatchObject({
      state: 'running',
      agentId: a.agentId,
      attempts: 1,
      totalBytes: 100,
    });
    expect((await claim(a.auth, { kinds: ['import'] })).json()).toEqual([]);
    expect((await claim(b.auth, { kinds: ['import'] })).json()[0].id).toBe(forB.id);
  });

  it('takes progress and a finish from the claiming agent only, and publishes transfers', async () => {
    const a = await h.enroll();
    const other = await h.enroll();
    const job = await h.app.jobsRepo.enqueue({
      kind: 'relocate',
      agentId: a.agentId,
      totalBytes: 1000,
    });
    await claim(a.auth, { kinds: ['relocate'] });
    const seen: FreeLoaderEvent[] = [];
    const off = h.app.events.subscribe((e) => seen.push(e));
    const url = `/api/v1/jobs/${job.id}`;

    const progress = await h.call({
      method: 'POST',
      url: `${url}/progress`,
      headers: { authorization: a.auth },
      payload: { doneBytes: 400, rate: 123 },
    });
    expect(progress.json()).toEqual({ ok: true });
    const stranger = await h.call({
      method: 'POST',
      url: `${url}/progress`,
      headers: { authorization: other.auth },
      payload: { doneBytes: 1 },
    });
    expect(stranger.statusCode).toBe(404);

    const admin = (await h.login('admin')).authorization;
    const transfers = await h.call({
      method: 'GET',
      url: '/api/v1/transfers?state=running',
      headers: { authorization: admin },
    });
    expect(transfers.json().find((t: { jobId: string }) => t.jobId === job.id)).toMatchObject({
      doneBytes: 400,
      totalBytes: 1000,
      rate: 123,
      kind: 'relocate',
    });

    const finish = await h.call({
      method: 'POST',
      url: `${url}/finish`,
      headers: { authorization: a.auth },
      payload: { state: 'done' },
    });
    expect(finish.json()).toMatchObject({ id: job.id, state: 'done', doneBytes: 1000 });
    const twice = await h.call({
      method: 'POST',
      url: `${url}/finish`,
      headers: { authorization: a.auth },
      payload: { state: 'done' },
    });
    expect(twice.statusCode).toBe(409);
    off();
    expect(
      seen.filter((e) => e.type === 'transfer').map((e) => (e as { state: string }).state),
    ).toEqual(['running', 'done']);
  });

  it('marks a dataset ready when its last import job is done, failed when one fails', async () => {
    const a = await h.enroll();
    const ready = await h.app.namespaceRepo.createDataset({ path: 'imports/ok', sizeBytes: 10 });
    const failed = await h.app.namespaceRepo.createDataset({ path: 'imports/bad', sizeBytes: 10 });
    const unhashed = await h.app.namespaceRepo.createDataset({
      path: 'imports/unhashed',
      sizeBytes: 10,
    });
    for (const ds of [ready, failed, unhashed]) {
      await h.app.jobsRepo.enqueue({ kind: 'import', agentId: a.agentId, datasetId: ds.id });
    }
    const jobs = (await claim(a.auth, { kinds: ['import'], max: 3 })).json<
      Array<{
        id: string;
        datasetId: string;
      }>
    >();
    // A dataset becomes readable only with every morsel's hash: report the one morsel's.
    const readyJob = jobs.find((j) => j.datasetId === ready.id)!;
    await h.call({
      method: 'POST',
      url: `/api/v1/jobs/${readyJob.id}/progress`,
      headers: { authorization: a.auth },
      payload: { doneBytes: 10, hashes: [{ index: 0, sha256: 'ab'.repeat(32) }] },
    });
    for (const job of jobs) {
      const body =
        job.datasetId === failed.id
          ? { state: 'failed', error: 'source said 404' }
          : { state: 'done' };
      await h.call({
        method: 'POST',
        url: `/api/v1/jobs/${job.id}/finish`,
        headers: { authorization: a.auth },
        payload: body,
      });
    }
    expect(await h.app.namespaceRepo.get(ready.id)).toMatchObject({
      state: 'ready',
      cachedBytes: 10,
    });
    expect(await h.app.namespaceRepo.get(failed.id)).toMatchObject({
      state: 'failed',
      error: 'source said 404',
    });
    expect(await h.app.namespaceRepo.get(unhashed.id)).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/never reported/),
    });
  });

  it('stores the morsel hashes an import reports with its progress', async () => {
    const a = await h.enroll();
    const ds = await h.app.namespaceRepo.createDataset({ path: 'imports/hashed', sizeBytes: 10 });
    const job = await h.app.jobsRepo.enqueue({
      kind: 'import',
      agentId: a.agentId,
      datasetId: ds.id,
    });
    await claim(a.auth, { kinds: ['import'] });
    const hex = (c: string) => c.repeat(64);
    const report = (hashes: Array<{ index: number; sha256: string }>) =>
      h.call({
        method: 'POST',
        url: `/api/v1/jobs/${job.id}/progress`,
        headers: { authorization: a.auth },
        payload: { doneBytes: 1, rate: 1, hashes },
      });
    // Out of order, in two reports, with a gap filled by the second.
    expect(
      (
        await report([
          { index: 2, sha256: hex('c') },
          { index: 0, sha256: hex('a') },
        ])
      ).statusCode,
    ).toBe(200);
    expect((await report([{ index: 1, sha256: hex('b') }])).statusCode).toBe(200);
    const stored = await h.app.placementRepo.getHashes(ds.id);
    expect(stored.toString('hex')).toBe(hex('a') + hex('b') + hex('c'));
    const bad = await report([{ index: 3, sha256: 'xyz' }]);
    expect(bad.statusCode).toBe(400);

    const admin = (await h.login('admin')).authorization;
    const rows = await h.call({
      method: 'GET',
      url: `/api/v1/transfers?datasetId=${ds.id}`,
      headers: { authorization: admin },
    });
    expect(rows.json()).toEqual([
      expect.objectContaining({ jobId: job.id, datasetId: ds.id, doneBytes: 1 }),
    ]);
  });

  it.each([
    ['/api/v1/jobs/claim', { max: 0 }],
    ['/api/v1/jobs/claim', { max: 17 }],
    ['/api/v1/jobs/not-a-uuid/finish', { state: 'done' }],
    ['/api/v1/jobs/00000000-0000-4000-8000-000000000000/finish', { state: 'sideways' }],
  ])('rejects POST %s %o with 400', async (url, payload) => {
    const a = await h.enroll();
    const res = await h.call({ method: 'POST', url, headers: { authorization: a.auth }, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_FAILED');
  });

  it('answers a claimed job with the payload of its kind', async () => {
    const a = await h.enroll();
    const ds = '0d9c0a52-3f0e-4c1e-9d55-8a1f2c3b4d5e';
    const imported: ImportJobPayload = {
      mode: 'ranged',
      source: {
        uri: 'http://source.test/a.bin',
        size: 10,
        etag: '"v1"',
        lastModified: null,
        acceptsRanges: true,
      },
      morselSize: MIN_MORSEL_SIZE,
      extents: [],
      donors: [],
      writeCapability: 'cap',
      extendsFrom: 3,
    };
    const trimmed: DeleteJobPayload = { datasetId: ds, fromMorsel: 2 };
    const imp = await h.app.jobsRepo.enqueue({
      kind: 'import',
      agentId: a.agentId,
      payload: imported,
    });
    const del = await h.app.jobsRepo.enqueue({
      kind: 'delete',
      agentId: a.agentId,
      payload: trimmed,
    });
    const res = await claim(a.auth, { kinds: ['import', 'delete'], max: 4 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      expect.objectContaining({ id: imp.id, kind: 'import', payload: imported }),
      expect.objectContaining({ id: del.id, kind: 'delete', payload: trimmed }),
    ]);
  });

  it('refuses users on agent routes', async () => {
    const user = (await h.login('admin')).authorization;
    const res = await claim(user);
    expect(res.statusCode).toBe(401);
  });
});
