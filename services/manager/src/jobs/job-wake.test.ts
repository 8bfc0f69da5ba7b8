import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { JOB_CHANNEL_CHECK_MS, type JobView, type JobWaitResponse } from '@freeloader/protocol';
import { buildApp } from '../app.js';
import { withTransaction } from '../db/pool.js';
import { systemPostgres } from '../db/system-postgres.js';
import { enqueueJob } from '../repositories/jobs.js';
import { startHarness, testConfig, type Harness } from '../test/harness.js';

// Jobs pushed, never lost (issue 16 item 4): two managers on one database (the system
// PostgreSQL when there is one, as the brief asks; else the tests' embedded one), each serving
// real HTTP. An agent's job channel is driven over HTTP exactly as the agent drives it (wait with
// the last cursor, claim when told, wait again at once), with waits held only WAIT_MS so that
// jobs queued at random moments keep landing in every phase of a wait: held, answering, between
// two waits, during a claim. A lost wake-up would leave a job for the JOB_CHANNEL_CHECK_MS
// safety net, which these agents never use: the bound below fails it.
const WAIT_MS = 300;
/**
 * Longest acceptable time from queueing to claim (ms). A few ms normally; the bound allows for a
 * machine at load 20-30 (claims queue behind other tests' work), and is still a quarter of
 * the 60 s check that used to catch lost wake-ups.
 */
const DELIVERY_BOUND_MS = JOB_CHANNEL_CHECK_MS / 4;
/** Jobs queued per scenario, each after a random pause of up to GAP_MS (a wait's cycle). */
const JOBS = 40;
const GAP_MS = WAIT_MS * 1.5;

const system = await systemPostgres();
let h: Harness;
let b: FastifyInstance;
const urls = new Map<FastifyInstance, string>();

beforeAll(async () => {
  h = await startHarness({ jobWaitMs: WAIT_MS }, {}, system.url ?? inject('pgAdminUrl'));
  b = await buildApp(testConfig(h.db.url, { jobWaitMs: WAIT_MS }), { timers: false });
  for (const app of [h.app, b]) {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    if (!addr || typeof addr === 'string') throw new Error('no port');
    urls.set(app, `http://127.0.0.1:${addr.port}/api/v1`);
  }
  await until('both LISTEN sessions', () => h.app.eventFanOut.listening && b.eventFanOut.listening);
}, 120_000);
afterAll(async () => {
  await b?.close();
  await h?.close();
});

async function until(what: string, probe: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!probe()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function http<T>(app: FastifyInstance, auth: string, method: string, path: string) {
  const res = await fetch(`${urls.get(app)}${path}`, {
    method,
    headers: {
      authorization: auth,
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    ...(method === 'POST' ? { body: JSON.stringify({ max: 16 }) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * An agent's job channel on `app` over HTTP, as apps/agent's JobChannel and JobRunner run it:
 * wait with the last cursor; when told, claim (all that wait) and note when each job arrived.
 */
function channel(app: FastifyInstance, agent: { auth: string }) {
  const arrived = new Map<string, number>();
  let stopped = false;
  let cursor: string | undefined;
  const loop = (async () => {
    while (!stopped) {
      const q = cursor ? `?cursor=${encodeURIComponent(cursor)}` : '';
      const answer = await http<JobWaitResponse>(app, agent.auth, 'GET', `/jobs/wait${q}`);
      cursor = answer.cursor;
      if (!answer.jobsPending) {
        // The agent pauses after an empty wait (MIN_EMPTY_WAIT_MS): a window between waits.
        await new Promise((r) => setTimeout(r, Math.random() * WAIT_MS));
        continue;
      }
      for (;;) {
        const jobs = await http<JobView[]>(app, agent.auth, 'POST', '/jobs/claim');
        for (const j of jobs) arrived.set(j.id, performance.now());
        if (jobs.length < 16) break;
      }
    }
  })();
  return {
    arrived,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/**
 * Queue JOBS jobs for `agentId` on `queueOn`, one at a time at a random moment of the channel's
 * cycle, and return each one's time from queueing to claim (ms). One at a time: a job whose
 * wake-up was lost must not be rescued by the claim the next job's wake-up causes.
 */
async function deliveries(
  queueOn: FastifyInstance,
  agentId: string,
  arrived: Map<string, number>,
): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < JOBS; i++) {
    await new Promise((r) => setTimeout(r, Math.random() * GAP_MS));
    const at = performance.now();
    // Both ways of queueing: on the pool (autocommit), and in a transaction.
    const job =
      i % 2 === 0
        ? await queueOn.jobsRepo.enqueue({ kind: 'delete', agentId })
        : await withTransaction(queueOn.pg, (tx) => enqueueJob(tx, { kind: 'delete', agentId }));
    await until(`job ${i} to be claimed`, () => arrived.has(job.id), DELIVERY_BOUND_MS);
    ms.push(arrived.get(job.id)! - at);
  }
  return ms;
}

/** p50 and max of `ms`; the max is usually the first job (connections, caches still cold). */
const summary = (ms: number[]): string => {
  const s = [...ms].sort((x, y) => x - y);
  return `p50 ${s[s.length >> 1]!.toFixed(0)} ms, max ${s[s.length - 1]!.toFixed(0)} ms`;
};

describe(`job wake-ups (${system.url ? 'system' : 'embedded'} PostgreSQL)`, () => {
  // Jobs are always queued on the first manager (h.app); the agent waits on one or the other.
  it.each([
    ['on the manager that queued its jobs', () => h.app],
    ['waiting on another manager (NOTIFY)', () => b],
  ])('reach an agent %s, whenever they come', async (where, waitOn) => {
    const agent = await h.enroll();
    const ch = channel(waitOn(), agent);
    try {
      const ms = await deliveries(h.app, agent.agentId, ch.arrived);
      console.log(`agent ${where}: ${JOBS} jobs, ${summary(ms)}`);
      expect(Math.max(...ms)).toBeLessThan(DELIVERY_BOUND_MS);
    } finally {
      await ch.stop();
    }
  });

  it('are not sent for a job whose transaction rolled back', async () => {
    const agent = await h.enroll();
    const other = await h.enroll();
    const cursor = b.jobWaiters.cursor;
    await expect(
      withTransaction(h.app.pg, async (tx) => {
        await enqueueJob(tx, { kind: 'delete', agentId: agent.agentId });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    // Notices arrive in commit order: once B heard of the other agent's later job, it would
    // have heard of the first one had it been sent.
    await h.app.jobsRepo.enqueue({ kind: 'delete', agentId: other.agentId });
    await until(
      'B to hear of the committed job',
      () => b.jobWaiters.since(other.agentId, cursor) === 'new',
    );
    expect(b.jobWaiters.since(agent.agentId, cursor)).toBe('nothing');
  });

  it('lost while the LISTEN session was down are made up for: every wait is woken', async () => {
    const agent = await h.enroll();
    const held = http<JobWaitResponse>(
      b,
      agent.auth,
      'GET',
      `/jobs/wait?cursor=${b.jobWaiters.cursor}`,
    );
    await until('the wait to be held', () => b.jobWaiters.isWaiting(agent.agentId));
    const cursor = b.jobWaiters.cursor;
    await h.db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE application_name = 'freeloader-manager-events' AND datname = current_database()`,
    );
    await until('B to lose its LISTEN session', () => !b.eventFanOut.listening);
    await until('B to listen again', () => b.eventFanOut.listening);
    expect(b.jobWaiters.since(agent.agentId, cursor)).toBe('new');
    // The held wait is answered (at once, or, if it timed out meanwhile, by the next one).
    const answer = await held;
    const next = answer.jobsPending
      ? answer
      : await http<JobWaitResponse>(b, agent.auth, 'GET', `/jobs/wait?cursor=${cursor}`);
    expect(next.jobsPending).toBe(true);
  });
});
