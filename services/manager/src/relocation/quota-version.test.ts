import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { MiB, type AgentView, type Heartbeat } from '@freeloader/protocol';
import { buildApp } from '../app.js';
import { startHarness, testConfig, type Harness } from '../test/harness.js';

// A heartbeat the agent built before a quota change can reach a manager after the change: it
// must not put the old quota back (a raise followed at once by an import failed with NO_SPACE
// in CI until the next heartbeat). The agent versions its quota; managers keep the higher one.
let h: Harness;
let other: FastifyInstance;
beforeAll(async () => {
  h = await startHarness();
  other = await buildApp(testConfig(h.db.url), { timers: false });
});
afterAll(async () => {
  await other?.close();
  await h?.close();
});

const hb = (quotaBytes: number, quotaVersion?: number): Heartbeat => ({
  quotaBytes,
  ...(quotaVersion === undefined ? {} : { quotaVersion }),
  usedBytes: 0,
  freeBytes: quotaBytes,
  servingRate: 0,
});

async function heartbeat(app: FastifyInstance, auth: string, body: Heartbeat) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/heartbeat',
    headers: { authorization: auth },
    payload: body,
  });
  expect(res.statusCode).toBe(200);
}

async function setQuota(auth: string, quotaBytes: number, quotaVersion?: number) {
  const res = await h.call({
    method: 'POST',
    url: '/api/v1/agents/me/quota',
    headers: { authorization: auth },
    payload: { quotaBytes, ...(quotaVersion === undefined ? {} : { quotaVersion }) },
  });
  expect(res.statusCode).toBe(200);
}

const row = async (id: string) =>
  (
    await h.app.pg.query<{ quota_bytes: number; quota_version: number }>(
      'SELECT quota_bytes, quota_version FROM agents WHERE id = $1',
      [id],
    )
  ).rows[0]!;

async function listed(id: string): Promise<AgentView> {
  const admin = await h.login('admin');
  const res = await h.call({ method: 'GET', url: '/api/v1/agents', headers: admin });
  return res.json<AgentView[]>().find((a) => a.id === id)!;
}

describe('quota versions', () => {
  it('a heartbeat built before a raise, delivered after it, leaves the raise standing', async () => {
    const a = await h.enroll({ quotaBytes: 0 });
    await heartbeat(h.app, a.auth, hb(0, 100));
    await setQuota(a.auth, 20 * MiB, 200);
    await heartbeat(h.app, a.auth, hb(0, 100)); // in flight during the change
    await h.app.liveness.flush();
    expect(await row(a.agentId)).toEqual({ quota_bytes: 20 * MiB, quota_version: 200 });
    expect((await listed(a.agentId)).quotaBytes).toBe(20 * MiB);

    // The same late heartbeat through another manager of the database, flushed after: no change.
    await heartbeat(other, a.auth, hb(0, 100));
    await other.liveness.flush();
    expect(await row(a.agentId)).toEqual({ quota_bytes: 20 * MiB, quota_version: 200 });

    // Heartbeats after the change carry its version (or a later one, after a restart).
    await heartbeat(h.app, a.auth, hb(20 * MiB, 200));
    await heartbeat(other, a.auth, hb(8 * MiB, 300));
    await other.liveness.flush();
    expect(await row(a.agentId)).toEqual({ quota_bytes: 8 * MiB, quota_version: 300 });
  });

  it('an agent without versions is taken as it sends', async () => {
    const a = await h.enroll({ quotaBytes: 4 * MiB });
    await setQuota(a.auth, 20 * MiB);
    expect((await row(a.agentId)).quota_bytes).toBe(20 * MiB);
    await heartbeat(h.app, a.auth, hb(6 * MiB));
    await h.app.liveness.flush();
    expect(await row(a.agentId)).toEqual({ quota_bytes: 6 * MiB, quota_version: 0 });
  });
});
