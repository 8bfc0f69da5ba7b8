import type { FastifyInstance } from 'fastify';
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  signCapability,
  verifyCapability,
  type EnrollResponse,
  type FreeLoaderEvent,
} from '@freeloader/protocol';
import { LOOPBACK_SOURCES } from '@freeloader/sources/testing';
import { buildApp } from './app.js';
import { createUser } from './bootstrap.js';
import { TEST_MASTER_KEY_FILE } from './test/master-key.js';
import { loadConfig, type Config } from './config.js';
import { createScratchDatabase, type ScratchDatabase } from './db/scratch-database.js';
import { systemPostgres } from './db/system-postgres.js';

// Two managers on one database (the system PostgreSQL when there is one, as the issue asks;
// else the tests' embedded one), all timers running: liveness written by one is read by the
// other, events cross over NOTIFY, periodic work runs on one of them, sessions and capability
// keys are shared.
const STALE_MS = 1_500;
const system = await systemPostgres();
let db: ScratchDatabase;
let a: FastifyInstance;
let b: FastifyInstance;
let admin: string;

const config = (): Config =>
  loadConfig(
    {},
    {
      databaseUrl: db.url,
      logLevel: 'silent',
      home: '/nonexistent',
      masterKeyFile: TEST_MASTER_KEY_FILE,
      sourceAllow: [...LOOPBACK_SOURCES],
      staleAfterMs: STALE_MS,
      deadAfterMs: 60_000,
      softStateFlushMs: 100,
      jobLeaseMs: 2_000,
    },
  );

beforeAll(async () => {
  db = await createScratchDatabase(system.url ?? inject('pgAdminUrl'));
  a = await buildApp(config());
  b = await buildApp(config());
  await createUser(a, { username: 'root', password: 'pw-root-1', role: 'admin' });
  admin = await login(a, 'root', 'pw-root-1');
}, 120_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await db?.drop();
});

async function login(app: FastifyInstance, username: string, password: string): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { username, password },
  });
  expect(res.statusCode, res.body).toBe(200);
  return `Bearer ${res.json<{ token: string }>().token}`;
}

async function enroll(app: FastifyInstance): Promise<EnrollResponse & { auth: string }> {
  const token = await app.inject({
    method: 'POST',
    url: '/api/v1/tokens',
    headers: { authorization: admin },
    payload: {},
  });
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/enroll',
    payload: {
      token: token.json<{ token: string }>().token,
      name: `agent-${Math.random().toString(36).slice(2, 8)}`,
      url: 'http://127.0.0.1:7401',
      quotaBytes: 1_000_000,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json<EnrollResponse>();
  return { ...body, auth: `Bearer agent.${body.agentId}.${body.credential}` };
}

const heartbeat = async (app: FastifyInstance, auth: string): Promise<void> => {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/heartbeat',
    headers: { authorization: auth },
    payload: { quotaBytes: 1_000_000, usedBytes: 0, freeBytes: 900_000, servingRate: 7 },
  });
  expect(res.statusCode, res.body).toBe(200);
};

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined) {
  const until = performance.now() + 60_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const outagesOf = async (agentId: string) =>
  (
    await db.query<{ d: string }>(
      'SELECT duration_ms AS d FROM donor_outages WHERE agent_id = $1',
      [agentId],
    )
  ).map((r) => Number(r.d));

describe(`two managers on one database (${system.url ? 'system' : 'embedded'} PostgreSQL)`, () => {
  it('an agent heartbeating to either manager is live on both, heartbeat numbers included', async () => {
    const agent = await enroll(a);
    await heartbeat(a, agent.auth);
    // A flush between enrolment and heartbeat shares the sighting first, its numbers next.
    await waitFor(
      'B to see the agent live with its heartbeat numbers',
      () =>
        b.softState.stateOf(agent.agentId) === 'live' &&
        b.softState.heartbeatOf(agent.agentId)?.servingRate === 7,
    );
    // Alternating managers every 40% of the stale window: live on both throughout, no outage.
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, STALE_MS * 0.4));
      await heartbeat(i % 2 ? a : b, agent.auth);
      expect(a.softState.stateOf(agent.agentId)).toBe('live');
      expect(b.softState.stateOf(agent.agentId)).toBe('live');
    }
    await a.liveness.flush();
    await b.liveness.flush();
    expect(await outagesOf(agent.agentId)).toEqual([]);
  });

  it('a silence that both managers see end is recorded once', async () => {
    const agent = await enroll(a);
    await heartbeat(a, agent.auth);
    await waitFor('B to see the agent live', () => b.softState.stateOf(agent.agentId) === 'live');
    await waitFor('both to see it stale', () =>
      a.softState.stateOf(agent.agentId) === 'stale' &&
      b.softState.stateOf(agent.agentId) === 'stale'
        ? true
        : undefined,
    );
    // The silence ends on B, and on A before A has read B's sighting: both claim the outage.
    await heartbeat(b, agent.auth);
    await heartbeat(a, agent.auth);
    await a.liveness.flush();
    await b.liveness.flush();
    const outages = await outagesOf(agent.agentId);
    expect(outages).toHaveLength(1);
    expect(outages[0]).toBeGreaterThanOrEqual(STALE_MS);
  });

  it("fans events out: one raised on A reaches B's stream; liveness transitions stay local", async () => {
    await waitFor('both to listen', () => a.eventFanOut.listening && b.eventFanOut.listening);
    const seen: FreeLoaderEvent[] = [];
    const off = b.events.subscribeAll((e) => seen.push(e));
    const datasetId = '00000000-0000-4000-8000-000000000001';
    a.events.publish({ type: 'dataset', datasetId, state: 'ready' });
    a.events.publish({ type: 'agent', agentId: datasetId, state: 'stale' }, 'local');
    await waitFor('the event on B', () => seen.some((e) => e.type === 'dataset'));
    // B's own sweep may announce earlier tests' agents going stale: only A's event matters.
    expect(seen.filter((e) => e.type === 'agent' && e.agentId === datasetId)).toEqual([]);
    off();
  });

  it('listens again after its LISTEN session is cut (database restart, network)', async () => {
    await db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'freeloader-manager-events'`,
    );
    await waitFor('A to notice', () => !a.eventFanOut.listening || !b.eventFanOut.listening);
    await waitFor('both to listen again', () => a.eventFanOut.listening && b.eventFanOut.listening);
    const seen: FreeLoaderEvent[] = [];
    const off = a.events.subscribeAll((e) => seen.push(e));
    const datasetId = '00000000-0000-4000-8000-000000000002';
    b.events.publish({ type: 'dataset', datasetId, state: 'deleted' });
    await waitFor('the event on A', () => seen.some((e) => e.type === 'dataset'));
    off();
  });

  it('accepts on B the session and the capabilities minted by A', async () => {
    const users = await b.inject({
      method: 'GET',
      url: '/api/v1/agents',
      headers: { authorization: admin },
    });
    expect(users.statusCode, users.body).toBe(200);
    expect(b.signingKeys.publicKeyPem).toBe(a.signingKeys.publicKeyPem);
    const agentOfB = await enroll(b);
    const token = signCapability(a.signingKeys.privateKey, {
      ds: 'd1',
      ops: ['read'],
      sub: 'u1',
      exp: Math.floor(Date.now() / 1000) + 60,
    });
    // An agent enrolled through B verifies with the key B gave it.
    expect(
      verifyCapability(agentOfB.managerPublicKey, token, { dataset: 'd1', op: 'read' }).sub,
    ).toBe('u1');
  });

  it('runs each periodic task on exactly one manager, and the other takes over', async () => {
    const runs = (app: FastifyInstance) => app.singletons.tasks.get('jobLeases')!.runs;
    await waitFor('ten lease sweeps', () => runs(a) + runs(b) >= 10 || undefined);
    for (const [name] of a.singletons.tasks) {
      const ran = [a, b].filter((m) => m.singletons.tasks.get(name)!.runs > 0);
      expect(ran.length, name).toBeLessThanOrEqual(1);
    }
    expect(Math.min(runs(a), runs(b))).toBe(0);
    // /metrics says which manager holds the task.
    const held = async (app: FastifyInstance) =>
      /freeloader_periodic_task_held\{task="jobLeases"\} (\d)/.exec(
        (await app.inject({ method: 'GET', url: '/metrics' })).body,
      )?.[1];
    expect([await held(a), await held(b)].sort()).toEqual(['0', '1']);
    const [holder, other] = runs(a) > 0 ? [a, b] : [b, a];
    const before = runs(other);
    const stoppedAt = performance.now();
    await holder.close();
    await waitFor('the other manager to sweep', () => runs(other) > before || undefined);
    console.log(
      `lease sweep taken over ${Math.round(performance.now() - stoppedAt)} ms after close`,
    );
  });
});
