import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FreeLoaderEvent } from '@freeloader/protocol';
import { setPlacement } from '../repositories/placement.js';
import { startHarness, type Harness } from '../test/harness.js';
import { LOOPBACK_SOURCES } from '@freeloader/sources/testing';

let h: Harness;
let admin: string;
let now = 0;
const clock = () => now;

beforeAll(async () => {
  h = await startHarness({ staleAfterMs: 1_000, deadAfterMs: 10_000 }, { clock });
  admin = (await h.login('admin')).authorization;
});
afterAll(async () => {
  await h?.close();
});

async function mintToken(
  payload: Record<string, unknown> = {},
): Promise<{ id: string; token: string }> {
  const res = await h.call({
    method: 'POST',
    url: '/api/v1/tokens',
    headers: { authorization: admin },
    payload,
  });
  return res.json();
}

const enrollWith = (token: string) =>
  h.call({
    method: 'POST',
    url: '/api/v1/agents/enroll',
    payload: { token, name: 'pc-1', url: 'http://127.0.0.1:7401', quotaBytes: 5000 },
  });

const heartbeat = (authorization: string, body: Record<string, unknown> = {}) =>
  h.call({
    method: 'POST',
    url: '/api/v1/agents/heartbeat',
    headers: { authorization },
    payload: { quotaBytes: 5000, usedBytes: 0, freeBytes: 5000, servingRate: 0, ...body },
  });

async function listAgents() {
  const res = await h.call({
    method: 'GET',
    url: '/api/v1/agents',
    headers: { authorization: admin },
  });
  expect(res.statusCode).toBe(200);
  return res.json<Array<Record<string, unknown>>>();
}

describe('enrollment', () => {
  it('enrolls with a good token: id, credential, the manager public key', async () => {
    const { token } = await mintToken();
    const res = await enrollWith(token);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      agentId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      credential: expect.any(String),
      managerPublicKey: h.app.signingKeys.publicKeyPem,
      heartbeatIntervalMs: 5000,
    });
    const stored = await h.app.pg.query('SELECT credential_hash FROM agents WHERE id = $1', [
      res.json().agentId,
    ]);
    expect(stored.rows[0].credential_hash.toString('base64url')).not.toBe(res.json().credential);
  });

  it.each([
    ['unknown', async () => 'flj_doesnotexist', 'JOIN_TOKEN_INVALID'],
    [
      'expired',
      async () => {
        const t = await mintToken();
        await h.app.pg.query(
          `UPDATE join_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`,
          [t.id],
        );
        return t.token;
      },
      'JOIN_TOKEN_EXPIRED',
    ],
    [
      'used-up',
      async () => {
        const t = await mintToken({ maxUses: 1 });
        expect((await enrollWith(t.token)).statusCode).toBe(201);
        return t.token;
      },
      'JOIN_TOKEN_USED',
    ],
    [
      'revoked',
      async () => {
        const t = await mintToken();
        await h.call({
          method: 'DELETE',
          url: `/api/v1/tokens/${t.id}`,
          headers: { authorization: admin },
        });
        return t.token;
      },
      'JOIN_TOKEN_INVALID',
    ],
  ])('refuses an %s token with 401 %s', async (_what, makeToken, code) => {
    const res = await enrollWith(await makeToken());
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe(code);
  });

  it('spends a multi-use token exactly maxUses times under concurrency', async () => {
    const { token } = await mintToken({ maxUses: 2 });
    const results = await Promise.all([1, 2, 3, 4].map(() => enrollWith(token)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 201, 401, 401]);
  });
});

describe('heartbeat', () => {
  it('accepts the agent credential and answers the interval and source allow list', async () => {
    const agent = await h.enroll();
    const res = await heartbeat(agent.auth);
    expect(res.statusCode).toBe(200);
    // The manager hands its source allow list (here the harness's loopback) to its agents; new
    // jobs come on the job channel (GET /jobs/wait), not here.
    expect(res.json()).toEqual({
      heartbeatIntervalMs: 5000,
      sourceAllow: [...LOOPBACK_SOURCES],
    });
  });

  it.each([
    ['a wrong credential', (id: string) => `Bearer agent.${id}.wrong`, 401, 'UNAUTHENTICATED'],
    [
      'an unknown agent',
      () => `Bearer agent.00000000-0000-4000-8000-000000000000.x`,
      401,
      'UNAUTHENTICATED',
    ],
    ['a malformed header', (id: string) => `Bearer agent.${id}`, 401, 'UNAUTHENTICATED'],
    ['no header', () => '', 401, 'UNAUTHENTICATED'],
  ])('refuses %s', async (_what, auth, status, code) => {
    const agent = await h.enroll();
    const res = await heartbeat(auth(agent.agentId));
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(code);
  });

  it('refuses a revoked agent with 403 AGENT_REVOKED, and lists it as revoked', async () => {
    const agent = await h.enroll();
    const del = await h.call({
      method: 'DELETE',
      url: `/api/v1/agents/${agent.agentId}`,
      headers: { authorization: admin },
    });
    expect(del.statusCode).toBe(200);
    const res = await heartbeat(agent.auth);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('AGENT_REVOKED');
    expect((await listAgents()).find((a) => a.id === agent.agentId)?.state).toBe('revoked');
  });

  it('rejects a heartbeat body with negative bytes', async () => {
    const agent = await h.enroll();
    const res = await heartbeat(agent.auth, { freeBytes: -1 });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_FAILED');
  });
});

describe('agent list and soft state', () => {
  it('goes live → stale → dead on the injected clock, with events, and back to live', async () => {
    const seen: FreeLoaderEvent[] = [];
    const off = h.app.events.subscribe((e) => seen.push(e));
    const agent = await h.enroll({ name: 'clocked' });
    await heartbeat(agent.auth, { freeBytes: 4321, servingRate: 7, url: 'http://127.0.0.1:9999' });
    const stateNow = async () => (await listAgents()).find((a) => a.id === agent.agentId)!;

    expect(await stateNow()).toMatchObject({
      state: 'live',
      freeBytes: 4321,
      servingRate: 7,
      url: 'http://127.0.0.1:9999',
      lastHeartbeatAgoMs: 0,
    });
    now += 1_500;
    h.app.softState.sweep();
    expect(await stateNow()).toMatchObject({ state: 'stale', lastHeartbeatAgoMs: 1_500 });
    now += 10_000;
    h.app.softState.sweep();
    expect((await stateNow()).state).toBe('dead');
    await heartbeat(agent.auth);
    expect((await stateNow()).state).toBe('live');
    off();
    const mine = seen.filter((e) => e.type === 'agent' && e.agentId === agent.agentId);
    expect(mine.map((e) => (e as { state: string }).state)).toEqual([
      'live',
      'stale',
      'dead',
      'live',
    ]);
  });

  it('flushes last_seen_at and the heartbeat numbers to the agents table in one batch', async () => {
    const a = await h.enroll();
    const b = await h.enroll();
    await heartbeat(a.auth, { usedBytes: 11, freeBytes: 22, servingRate: 3, throttle: 'idle' });
    await heartbeat(b.auth, { usedBytes: 33, freeBytes: 44, servingRate: 0 });
    await h.app.liveness.flush();
    const { rows } = await h.app.pg.query(
      'SELECT id, reported_used_bytes, free_bytes, serving_rate, throttle, last_seen_at FROM agents WHERE id = ANY($1) ORDER BY free_bytes',
      [[a.agentId, b.agentId]],
    );
    expect(rows.map((r) => [r.reported_used_bytes, r.free_bytes, r.throttle])).toEqual([
      [11, 22, 'idle'],
      [33, 44, null],
    ]);
    for (const r of rows) expect(Date.now() - r.last_seen_at.getTime()).toBeLessThan(60_000);
  });

  it("writes a first heartbeat's URL and probe with the batched flush, not in its request", async () => {
    const a = await h.enroll();
    const row = async () =>
      (
        await h.app.pg.query(
          `SELECT url, disk_read_rate, disk_read_cached, download_rate, upload_rate, diagnosed_at
           FROM agents WHERE id = $1`,
          [a.agentId],
        )
      ).rows[0];
    const enrolledUrl = (await row()).url;
    const probe = {
      diskReadRate: 5e8,
      diskCached: true,
      downloadRate: 1e8,
      uploadRate: 5e7,
      measuredAt: '2026-11-27T10:00:00.000Z',
    };
    const res = await heartbeat(a.auth, { url: 'http://127.0.0.1:9911', diagnostics: probe });
    expect(res.statusCode).toBe(200);
    // Answered from memory: the row is as enrollment left it until the flush (timers are off).
    expect(await row()).toMatchObject({ url: enrolledUrl, diagnosed_at: null });
    expect((await listAgents()).find((x) => x.id === a.agentId)?.url).toBe('http://127.0.0.1:9911');

    // Through LivenessSync, which runs after any flush already under way: another path (repair's
    // failure classes flush before they read) may have taken the dirty rows and still be writing
    // them, and then a takeDirty() here found nothing and the row was read too soon (CI, once).
    await h.app.liveness.flush();
    expect(await row()).toMatchObject({
      url: 'http://127.0.0.1:9911',
      disk_read_rate: 5e8,
      disk_read_cached: true,
      download_rate: 1e8,
      upload_rate: 5e7,
      diagnosed_at: new Date(probe.measuredAt),
    });

    // A heartbeat without a probe keeps the stored one; a new probe replaces it whole.
    await heartbeat(a.auth, { usedBytes: 1 });
    await h.app.liveness.flush();
    expect(await row()).toMatchObject({ disk_read_rate: 5e8, disk_read_cached: true });
    const { diskCached: _cached, ...withoutCached } = {
      ...probe,
      diskReadRate: 7e8,
      measuredAt: '2026-11-27T11:00:00.000Z',
    };
    await heartbeat(a.auth, { diagnostics: withoutCached });
    await h.app.liveness.flush();
    expect(await row()).toMatchObject({
      url: 'http://127.0.0.1:9911',
      disk_read_rate: 7e8,
      disk_read_cached: null,
      diagnosed_at: new Date('2026-11-27T11:00:00.000Z'),
    });
  });

  it('refuses the list to scientists', async () => {
    const sci = await h.login('scientist');
    const res = await h.call({
      method: 'GET',
      url: '/api/v1/agents',
      headers: { authorization: sci.authorization },
    });
    expect(res.statusCode).toBe(403);
  });

  it('revoking an unknown agent is 404 AGENT_NOT_FOUND', async () => {
    const res = await h.call({
      method: 'DELETE',
      url: '/api/v1/agents/00000000-0000-4000-8000-000000000000',
      headers: { authorization: admin },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('AGENT_NOT_FOUND');
  });
});

describe('GET /agents/me/datasets', () => {
  it('lists the morsels placement assigns to the calling agent', async () => {
    const a = await h.enroll();
    const b = await h.enroll();
    const ds = await h.app.namespaceRepo.createDataset({
      path: 'held/one',
      sizeBytes: 6 * 65536,
      morselSize: 65536,
    });
    await setPlacement(h.app.pg, ds.id, [
      { copy: 0, first: 0, count: 6, unit: 1, phase: 0, donors: [a.agentId, b.agentId] },
      { copy: 1, first: 0, count: 6, unit: 2, phase: 1, donors: [a.agentId, b.agentId] },
    ]);
    const res = await h.call({
      method: 'GET',
      url: '/api/v1/agents/me/datasets',
      headers: { authorization: a.auth },
    });
    expect(res.statusCode).toBe(200);
    // copy 0: 0,2,4; copy 1 (pairs, starting on b): 2,3.
    expect(res.json()).toEqual({
      datasets: [{ id: ds.id, state: 'importing', morselSize: 65536, morsels: [0, 2, 3, 4] }],
    });
  });
});
