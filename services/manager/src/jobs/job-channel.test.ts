import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentCredentialCache } from '../auth/agent-credentials.js';
import { withTransaction } from '../db/pool.js';
import { enqueueJob } from '../repositories/jobs.js';
import { startHarness, type Harness } from '../test/harness.js';

// The job channel (issue 16 item 4) and the heartbeat's credential cache, on a real manager app
// and PostgreSQL: waits are real requests held by the app, jobs are real rows.
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const wait = (auth: string, check = false, cursor?: string) => {
  const query = new URLSearchParams();
  if (check) query.set('check', 'true');
  if (cursor) query.set('cursor', cursor);
  return h.call({
    method: 'GET',
    url: `/api/v1/jobs/wait?${query.toString()}`,
    headers: { authorization: auth },
  });
};

const heartbeat = (authorization: string) =>
  h.call({
    method: 'POST',
    url: '/api/v1/agents/heartbeat',
    headers: { authorization },
    payload: { quotaBytes: 5000, usedBytes: 0, freeBytes: 5000, servingRate: 0 },
  });

/** Resolve once `agentId` holds an open wait on the app (the request reached the handler). */
async function waitHeld(agentId: string, timeoutMs = 30_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!h.app.jobWaiters.isWaiting(agentId)) {
    if (performance.now() > until) throw new Error(`no wait held for ${agentId}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the job channel', () => {
  it('answers a held wait as soon as a job is queued for that agent', async () => {
    const agent = await h.enroll();
    const other = await h.enroll();
    const held = wait(agent.auth);
    const otherHeld = wait(other.auth);
    await waitHeld(agent.agentId);
    await waitHeld(other.agentId);
    await h.app.jobsRepo.enqueue({ kind: 'delete', agentId: agent.agentId });
    const res = await held;
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ jobsPending: true });
    // The other agent's wait is still held: the job was not for it.
    expect(h.app.jobWaiters.isWaiting(other.agentId)).toBe(true);
    h.app.jobWaiters.notify(other.agentId);
    expect((await otherHeld).json()).toMatchObject({ jobsPending: true });
  });

  it('wakes the agent only once the transaction that queued the job committed', async () => {
    const agent = await h.enroll();
    const held = wait(agent.auth);
    await waitHeld(agent.agentId);
    let heldDuringTx = false;
    await withTransaction(h.app.pg, async (tx) => {
      await enqueueJob(tx, { kind: 'delete', agentId: agent.agentId });
      // Not committed: a claim now would find nothing, so the agent must not be told yet.
      heldDuringTx = h.app.jobWaiters.isWaiting(agent.agentId);
    });
    expect(heldDuringTx).toBe(true);
    expect((await held).json()).toMatchObject({ jobsPending: true });
    const claimed = await h.app.jobsRepo.claim(agent.agentId, { max: 5 });
    expect(claimed).toHaveLength(1);
  });

  it('does not wake the agent for a job whose transaction rolled back', async () => {
    const agent = await h.enroll();
    const held = wait(agent.auth);
    await waitHeld(agent.agentId);
    await expect(
      withTransaction(h.app.pg, async (tx) => {
        await enqueueJob(tx, { kind: 'delete', agentId: agent.agentId });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(h.app.jobWaiters.isWaiting(agent.agentId)).toBe(true);
    h.app.jobWaiters.notify(agent.agentId);
    expect((await held).json()).toMatchObject({ jobsPending: true });
    expect(await h.app.jobsRepo.claim(agent.agentId, { max: 5 })).toEqual([]);
  });

  it('answers at once the next wait of an agent that was between waits when its job came', async () => {
    const agent = await h.enroll();
    const first = wait(agent.auth);
    await waitHeld(agent.agentId);
    h.app.jobWaiters.notify(null); // some unrelated wake-up ends the first wait
    const { cursor } = (await first).json<{ cursor: string }>();
    await h.app.jobsRepo.claim(agent.agentId, { max: 16 });
    // Queued with no wait open, on the pool (autocommit)…
    await h.app.jobsRepo.enqueue({ kind: 'delete', agentId: agent.agentId });
    // …the next wait, carrying the cursor, is answered without being held.
    const res = await wait(agent.auth, false, cursor);
    expect(res.json()).toMatchObject({ jobsPending: true });
    // Found by the cursor, not by a database check.
    expect(h.app.jobWaiters.since(agent.agentId, cursor)).toBe('new');
  });

  it('finds a job queued while the agent was away when it reconnects with check', async () => {
    const agent = await h.enroll();
    await h.app.jobsRepo.enqueue({ kind: 'delete', agentId: agent.agentId });
    // A restarted manager has no cursor to judge by: the agent's check asks the database.
    const res = await wait(agent.auth, true, 'f00000000000.3');
    expect(res.json()).toMatchObject({ jobsPending: true });
  });

  it('wakes the agent of a job re-queued when its lease lapsed', async () => {
    const agent = await h.enroll();
    const job = await h.app.jobsRepo.enqueue({ kind: 'delete', agentId: agent.agentId });
    expect(await h.app.jobsRepo.claim(agent.agentId, { max: 16 })).toHaveLength(1);
    await h.app.pg.query(
      `UPDATE jobs SET lease_expires_at = now() - interval '1 s' WHERE id = $1`,
      [job.id],
    );
    const held = wait(agent.auth, false, h.app.jobWaiters.cursor);
    await waitHeld(agent.agentId);
    expect(await h.app.jobsRepo.requeueLapsed(job.id)).not.toBeNull();
    expect((await held).json()).toMatchObject({ jobsPending: true });
  });

  it('refuses a wait without agent credentials', async () => {
    const res = await h.call({ method: 'GET', url: '/api/v1/jobs/wait' });
    expect(res.statusCode).toBe(401);
  });
});

describe('agent credentials on the heartbeat path', () => {
  /** Count the credential lookups the app's pool runs while `fn` does. */
  async function credentialQueries(fn: () => Promise<void>): Promise<number> {
    const pool = h.app.pg;
    const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    let n = 0;
    (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text;
      if (text?.includes('credential_hash')) n++;
      return original(...args);
    };
    try {
      await fn();
    } finally {
      delete (pool as unknown as { query?: unknown }).query;
    }
    return n;
  }

  it('verifies repeated heartbeats from memory: no credential query after the first', async () => {
    const agent = await h.enroll();
    const first = await credentialQueries(async () => {
      expect((await heartbeat(agent.auth)).statusCode).toBe(200);
    });
    expect(first).toBe(1);
    const later = await credentialQueries(async () => {
      for (let i = 0; i < 5; i++) expect((await heartbeat(agent.auth)).statusCode).toBe(200);
    });
    expect(later).toBe(0);
  });

  it('loads every credential at once, so a restarted manager looks none up', async () => {
    const agent = await h.enroll();
    let lookups = 0;
    const cache = new AgentCredentialCache(async (id) => {
      lookups++;
      return h.app.agentsRepo.credentialOf(id);
    });
    cache.prime(await h.app.agentsRepo.allCredentials());
    expect(await cache.verify(agent.agentId, agent.credential)).toEqual({ revoked: false });
    expect(await cache.verify(agent.agentId, 'wrong')).toBeNull();
    expect(lookups).toBe(0);
  });

  it('answers from an expired entry while it is read again in the background', async () => {
    const agent = await h.enroll();
    let lookups = 0;
    let held: Promise<void> = Promise.resolve();
    let release: () => void = () => undefined;
    // A TTL of 0: the entry is expired at every verify after the first.
    const cache = new AgentCredentialCache(async (id) => {
      lookups++;
      await held;
      return h.app.agentsRepo.credentialOf(id);
    }, 0);
    expect(await cache.verify(agent.agentId, agent.credential)).toEqual({ revoked: false });
    held = new Promise((r) => (release = r));
    // The database read is held: these answer from memory, and share one read.
    for (let i = 0; i < 3; i++) {
      expect(await cache.verify(agent.agentId, agent.credential)).toEqual({ revoked: false });
    }
    expect(await cache.verify(agent.agentId, 'wrong')).toBeNull();
    expect(lookups).toBe(2);
    // A revocation still waits for the database.
    cache.forget(agent.agentId);
    release();
    expect(await cache.verify(agent.agentId, agent.credential)).toEqual({ revoked: false });
    expect(lookups).toBe(3);
  });

  it('refuses a wrong credential for an agent whose right one is cached', async () => {
    const agent = await h.enroll();
    expect((await heartbeat(agent.auth)).statusCode).toBe(200);
    const res = await heartbeat(`Bearer agent.${agent.agentId}.not-the-credential`);
    expect(res.statusCode).toBe(401);
  });

  it('drops the cached credential of an agent revoked elsewhere (another manager, SQL)', async () => {
    const agent = await h.enroll();
    expect((await heartbeat(agent.auth)).statusCode).toBe(200);
    // Not through this app: no event tells it; its poll of recent revocations must.
    await h.app.pg.query('UPDATE agents SET revoked_at = now() WHERE id = $1', [agent.agentId]);
    const until = performance.now() + 60_000;
    let status = 200;
    while (status === 200 && performance.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await heartbeat(agent.auth)).statusCode;
    }
    expect(status).toBe(403);
  });

  it('rejects a revoked agent at once although its credential was cached', async () => {
    const agent = await h.enroll();
    expect((await heartbeat(agent.auth)).statusCode).toBe(200);
    const admin = (await h.login('admin')).authorization;
    const revoke = await h.call({
      method: 'DELETE',
      url: `/api/v1/agents/${agent.agentId}`,
      headers: { authorization: admin },
    });
    expect(revoke.statusCode).toBe(200);
    const res = await heartbeat(agent.auth);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('AGENT_REVOKED');
  });
});
