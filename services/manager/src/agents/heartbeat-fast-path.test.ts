import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { startHarness, type Harness } from '../test/harness.js';
import { steadyHeartbeat } from './heartbeat-fast-path.js';

// Over real HTTP (app.inject never reaches the server's request listener, where the fast path
// sits): steady heartbeats answered from memory, everything else by the route, identically.
let h: Harness;
let base: string;

beforeAll(async () => {
  // Short waits: a wait the route holds for lack of news ends soon.
  h = await startHarness({ sourceAllow: ['10.9.0.0/16'], jobWaitMs: 1_000 });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => h?.close());

const body = {
  quotaBytes: 100,
  usedBytes: 10,
  freeBytes: 90,
  servingRate: 0,
  cpuLoad: 0.2,
  url: 'http://10.9.0.1:7400',
};

async function beat(authorization: string, payload: unknown, contentType = 'application/json') {
  const res = await fetch(`${base}/api/v1/agents/heartbeat`, {
    method: 'POST',
    headers: { authorization, 'content-type': contentType },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  const json = (await res.json()) as { sourceAllow?: string[] };
  return { status: res.status, type: res.headers.get('content-type'), json };
}

const heartbeatsCounted = async (): Promise<number> => {
  const text = await h.app.metrics.getSingleMetricAsString('freeloader_heartbeats_total');
  return Number(/outcome="ok"} (\d+)/.exec(text)?.[1] ?? 0);
};

describe('heartbeat fast path', () => {
  it('answers steady heartbeats as the route does, records them and counts them', async () => {
    const a = await h.enroll();
    const first = await beat(a.auth, body); // the route: a new URL to write
    const counted = await heartbeatsCounted();
    const fast = h.app.heartbeatFastPath.answered;
    const steady = await beat(a.auth, { ...body, cpuLoad: 0.9, usedBytes: 11 });
    expect(steady).toEqual(first);
    expect(steady).toMatchObject({
      status: 200,
      type: 'application/json; charset=utf-8',
      json: { heartbeatIntervalMs: h.app.config.heartbeatIntervalMs },
    });
    expect(steady.json.sourceAllow).toContain('10.9.0.0/16');
    expect(h.app.softState.heartbeatOf(a.agentId)?.usedBytes).toBe(11);
    expect(await heartbeatsCounted()).toBe(counted + 1);
    expect(h.app.heartbeatFastPath.answered).toBe(fast + 1);
  });

  it('leaves errors to the route: bad JSON, invalid body, wrong and revoked credentials', async () => {
    const a = await h.enroll();
    await beat(a.auth, body);
    const fast = h.app.heartbeatFastPath.answered;
    const bad = await beat(a.auth, '{"quotaBytes": ');
    expect(bad.status).toBe(400);
    const invalid = await beat(a.auth, { ...body, freeBytes: -1 });
    expect(invalid).toMatchObject({ status: 400, json: { error: { code: 'VALIDATION_FAILED' } } });
    const poisoned = await beat(a.auth, `{"__proto__": {"x": 1}, "quotaBytes": 1}`);
    expect(poisoned.status).toBe(400);
    const wrong = await beat(
      a.auth.replace(/.$/, (c) => (c === 'x' ? 'y' : 'x')),
      body,
    );
    expect(wrong).toMatchObject({ status: 401, json: { error: { code: 'UNAUTHENTICATED' } } });
    const admin = await h.login('admin');
    const revoke = await h.call({
      method: 'DELETE',
      url: `/api/v1/agents/${a.agentId}`,
      headers: { authorization: admin.authorization },
    });
    expect(revoke.statusCode).toBe(200);
    const revoked = await beat(a.auth, body);
    expect(revoked).toMatchObject({ status: 403, json: { error: { code: 'AGENT_REVOKED' } } });
    expect(h.app.heartbeatFastPath.answered).toBe(fast);
  });

  it('hands heartbeats that write to the database to the route (new URL, probe, jobs)', async () => {
    const a = await h.enroll();
    await beat(a.auth, body);
    const fast = h.app.heartbeatFastPath.answered;
    const moved = await beat(a.auth, { ...body, url: 'http://10.9.0.2:7400' });
    expect(moved.status).toBe(200);
    // The route records it; the row follows with the batched soft-state write.
    expect(h.app.softState.heartbeatOf(a.agentId)?.url).toBe('http://10.9.0.2:7400');
    await h.app.liveness.flush();
    const { rows } = await h.app.pg.query('SELECT url FROM agents WHERE id = $1', [a.agentId]);
    expect(rows[0].url).toBe('http://10.9.0.2:7400');
    expect(h.app.heartbeatFastPath.answered).toBe(fast);
  });
});

describe('job channel fast path', () => {
  const wait = async (authorization: string, query: string) => {
    const res = await fetch(`${base}/api/v1/jobs/wait?${query}`, { headers: { authorization } });
    return {
      status: res.status,
      json: (await res.json()) as { jobsPending: boolean; cursor: string },
    };
  };

  it("holds a wait with this run's cursor and answers it when a job is announced", async () => {
    const a = await h.enroll();
    const first = await wait(a.auth, 'check=true'); // the route: looks in the jobs table
    expect(first).toMatchObject({ status: 200, json: { jobsPending: false } });
    const held = wait(a.auth, `cursor=${first.json.cursor}`);
    // Poll until the wait is held (a busy machine may take a while to deliver it).
    for (let i = 0; i < 400 && !h.app.jobWaiters.isWaiting(a.agentId); i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    h.app.jobWaiters.notify(a.agentId);
    const woke = await held;
    expect(woke).toMatchObject({ status: 200, json: { jobsPending: true } });
    expect(woke.json.cursor).not.toBe(first.json.cursor);
    // A cursor it cannot judge and a bad one go to the route, as before.
    expect((await wait(a.auth, 'cursor=ffff.1')).json.jobsPending).toBe(false);
    expect((await wait(a.auth, `cursor=${'x'.repeat(70)}`)).status).toBe(400);
    expect((await wait('Bearer agent.nobody.x', `cursor=${woke.json.cursor}`)).status).toBe(401);
  });
});

describe('steadyHeartbeat', () => {
  const hb = {
    ...body,
    diagnostics: {
      diskReadRate: 1,
      downloadRate: 1,
      uploadRate: 1,
      measuredAt: '2026-11-27T00:00:00.000Z',
    },
  };
  it('is steady with the same URL and probe and no running jobs', () => {
    expect(steadyHeartbeat(hb, { ...hb, cpuLoad: 0.5 })).toBe(true);
    expect(steadyHeartbeat(hb, { ...hb, url: 'http://10.9.0.3:7400' })).toBe(false);
    expect(
      steadyHeartbeat(hb, {
        ...hb,
        diagnostics: { ...hb.diagnostics, measuredAt: '2026-11-28T00:00:00.000Z' },
      }),
    ).toBe(false);
    expect(
      steadyHeartbeat(hb, { ...hb, runningJobs: ['11111111-1111-4111-8111-111111111111'] }),
    ).toBe(false);
    expect(steadyHeartbeat(undefined, hb)).toBe(false);
  });
});
