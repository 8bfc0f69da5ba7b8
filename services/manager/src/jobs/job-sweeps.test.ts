import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JOB_ATTEMPTS, type JobView } from '@freeloader/protocol';
import { startHarness, type Harness } from '../test/harness.js';

/** Short enough to lapse within a test, long enough for a busy machine to claim in time. */
const LEASE_MS = 400;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ jobLeaseMs: LEASE_MS });
});
afterAll(async () => {
  await h?.close();
});

const claim = async (auth: string, kinds: string[]): Promise<JobView[]> =>
  (
    await h.call({
      method: 'POST',
      url: '/api/v1/jobs/claim',
      headers: { authorization: auth },
      payload: { kinds },
    })
  ).json<JobView[]>();

const heartbeat = (auth: string, runningJobs: string[]) =>
  h.call({
    method: 'POST',
    url: '/api/v1/agents/heartbeat',
    headers: { authorization: auth },
    payload: { quotaBytes: 1e6, usedBytes: 0, freeBytes: 1e6, servingRate: 0, runningJobs },
  });

/** Sweep until `check` holds (the lease and the start-up grace lapse on the wall clock). */
async function sweepUntil(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await h.app.leaseSweeper.sweep();
    if (await check()) return;
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const stateOf = async (id: string) => (await h.app.jobsRepo.get(id))!.state;

describe('job leases', () => {
  it('keeps a job whose agent renews it by heartbeat, re-queues it when renewals stop', async () => {
    const a = await h.enroll();
    const job = await h.app.jobsRepo.enqueue({ kind: 'delete', agentId: a.agentId });
    expect((await claim(a.auth, ['delete'])).map((j) => j.id)).toEqual([job.id]);

    // Heartbeats for well over a lease: the job stays running.
    const until = Date.now() + 3 * LEASE_MS;
    while (Date.now() < until) {
      expect((await heartbeat(a.auth, [job.id])).statusCode).toBe(200);
      await h.app.leaseSweeper.sweep();
      expect(await stateOf(job.id)).toBe('running');
      await new Promise((r) => setTimeout(r, LEASE_MS / 8));
    }

    await sweepUntil(async () => (await stateOf(job.id)) === 'queued');
    // Back in the queue for the same agent, which claims it again.
    expect((await claim(a.auth, ['delete'])).map((j) => j.id)).toEqual([job.id]);
    expect((await h.app.jobsRepo.get(job.id))!.attempts).toBe(2);
  });

  it('fails an import out of attempts and releases its reservations', async () => {
    const a = await h.enroll({ quotaBytes: 10_000 });
    const ds = await h.app.namespaceRepo.createDataset({ path: 'lease/lapsed', sizeBytes: 10 });
    const reservation = await h.app.reservationsRepo.reserve({
      agentId: a.agentId,
      bytes: 4_000,
      datasetId: ds.id,
    });
    const job = await h.app.jobsRepo.enqueue({
      kind: 'import',
      agentId: a.agentId,
      datasetId: ds.id,
    });
    for (let attempt = 1; attempt <= MAX_JOB_ATTEMPTS; attempt++) {
      await sweepUntil(async () => (await claim(a.auth, ['import'])).length === 1);
      expect((await h.app.jobsRepo.get(job.id))!.attempts).toBe(attempt);
      if (attempt < MAX_JOB_ATTEMPTS) {
        await sweepUntil(async () => (await stateOf(job.id)) === 'queued');
      }
    }
    await sweepUntil(async () => (await stateOf(job.id)) === 'failed');
    expect((await h.app.jobsRepo.get(job.id))!.error).toMatch(/lease lapsed/);
    expect(await h.app.namespaceRepo.get(ds.id)).toMatchObject({ state: 'failed' });
    const { rows } = await h.app.pg.query<{ state: string }>(
      'SELECT state FROM reservations WHERE id = $1',
      [reservation.id],
    );
    expect(rows[0]!.state).toBe('released');
  });

  it('takes the late report of a run whose lease lapsed from its agent only', async () => {
    const a = await h.enroll();
    const stranger = await h.enroll();
    const job = await h.app.jobsRepo.enqueue({ kind: 'delete', agentId: a.agentId });
    await claim(a.auth, ['delete']);
    await sweepUntil(async () => (await stateOf(job.id)) === 'queued');
    const done = (auth: string) =>
      h.call({
        method: 'POST',
        url: `/api/v1/jobs/${job.id}/finish`,
        headers: { authorization: auth },
        payload: { state: 'done' },
      });
    expect((await done(stranger.auth)).statusCode).toBe(404);
    expect((await done(a.auth)).statusCode).toBe(200);
    expect(await stateOf(job.id)).toBe('done');
  });

  it('prunes finished jobs past their retention, and only those', async () => {
    const a = await h.enroll();
    const old = await h.app.jobsRepo.enqueue({ kind: 'patch', agentId: a.agentId });
    const fresh = await h.app.jobsRepo.enqueue({ kind: 'patch', agentId: a.agentId });
    const open = await h.app.jobsRepo.enqueue({ kind: 'patch', agentId: a.agentId });
    await h.app.pg.query(
      `UPDATE jobs SET state = 'done', updated_at = now() - interval '2 hours' WHERE id = $1`,
      [old.id],
    );
    await h.app.pg.query(`UPDATE jobs SET state = 'failed' WHERE id = $1`, [fresh.id]);
    await h.app.pg.query(`UPDATE jobs SET updated_at = now() - interval '2 hours' WHERE id = $1`, [
      open.id,
    ]);
    expect(await h.app.jobsRepo.pruneFinished(3600_000)).toBeGreaterThanOrEqual(1);
    expect(await h.app.jobsRepo.get(old.id)).toBeNull();
    expect(await h.app.jobsRepo.get(fresh.id)).not.toBeNull();
    expect(await h.app.jobsRepo.get(open.id)).not.toBeNull();
  });
});
