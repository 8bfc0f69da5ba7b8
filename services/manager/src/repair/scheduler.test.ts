import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentView } from '@freeloader/protocol';
import { startHarness, type Harness } from '../test/harness.js';
import { RepairScheduler } from './scheduler.js';

// The repair scheduler on a real PostgreSQL, its clock driven by hand: failure classes persist,
// and the advisory lock keeps a second scheduler on the same database idle.
const REPAIR_AFTER_MS = 60_000;
let now = 0;
let h: Harness;
let admin: string;

beforeAll(async () => {
  h = await startHarness(
    { staleAfterMs: 1_000, deadAfterMs: 2_000, repairAfterMs: REPAIR_AFTER_MS },
    { clock: () => now },
  );
  admin = (await h.login('admin')).authorization;
}, 60_000);

afterAll(() => h?.close());

const agents = async () =>
  (await h.call({ method: 'GET', url: '/api/v1/agents', headers: { authorization: admin } })).json<
    AgentView[]
  >();
const classOf = async (id: string) => (await agents()).find((a) => a.id === id)?.failureClass;
const heartbeat = (authorization: string) =>
  h.call({
    method: 'POST',
    url: '/api/v1/agents/heartbeat',
    headers: { authorization },
    payload: { quotaBytes: 5000, usedBytes: 0, freeBytes: 5000, servingRate: 0 },
  });

describe('failure classes', () => {
  it('go online → offline → lost (persisted) → online again, recording only transient outages', async () => {
    const a = await h.enroll();
    expect(await classOf(a.agentId)).toBe('online');
    now += 1_500;
    expect(await classOf(a.agentId)).toBe('offline');
    expect(await h.app.repair.tick()).toBe(true);
    await heartbeat(a.auth);
    await h.app.repair.tick();
    expect(await classOf(a.agentId)).toBe('online');
    const outages = await h.app.pg.query<{ d: string }>(
      'SELECT duration_ms AS d FROM donor_outages WHERE agent_id = $1',
      [a.agentId],
    );
    expect(outages.rows.map((r) => Number(r.d))).toEqual([1_500]);

    now += REPAIR_AFTER_MS - 1;
    await h.app.repair.tick();
    expect(await classOf(a.agentId)).toBe('offline');
    now += 1;
    await h.app.repair.tick();
    expect(await classOf(a.agentId)).toBe('lost');
    // A database fact: another manager on this database sees it too, with no heartbeat yet.
    const row = await h.app.pg.query('SELECT 1 FROM agents WHERE id = $1 AND lost_at IS NOT NULL', [
      a.agentId,
    ]);
    expect(row.rowCount).toBe(1);
    await heartbeat(a.auth);
    await h.app.repair.tick();
    expect(await classOf(a.agentId)).toBe('online');
    // The lost spell is not a transient outage: the distribution keeps one observation.
    const after = await h.app.pg.query('SELECT 1 FROM donor_outages WHERE agent_id = $1', [
      a.agentId,
    ]);
    expect(after.rowCount).toBe(1);
  });

  it('records an outage that ended between two passes (no pass saw the donor offline)', async () => {
    const a = await h.enroll();
    now += 1_200;
    expect(await classOf(a.agentId)).toBe('offline');
    await heartbeat(a.auth);
    await h.app.repair.tick();
    const outages = await h.app.pg.query<{ d: string }>(
      'SELECT duration_ms AS d FROM donor_outages WHERE agent_id = $1',
      [a.agentId],
    );
    expect(outages.rows.map((r) => Number(r.d))).toEqual([1_200]);
  });

  it('are left alone by a dispatch-only pass (a finished job): only a full pass marks lost', async () => {
    const a = await h.enroll();
    now += REPAIR_AFTER_MS + 1_000;
    expect(await h.app.repair.tick(false)).toBe(true);
    expect(await classOf(a.agentId)).toBe('offline');
    await h.app.repair.tick();
    expect(await classOf(a.agentId)).toBe('lost');
    await heartbeat(a.auth);
    await h.app.repair.tick(false);
    const row = await h.app.pg.query('SELECT 1 FROM agents WHERE id = $1 AND lost_at IS NOT NULL', [
      a.agentId,
    ]);
    expect(row.rowCount).toBe(1);
    await h.app.repair.tick();
    expect(await classOf(a.agentId)).toBe('online');
  });
});

describe('the scheduler lock', () => {
  it('lets one scheduler per database run; the next takes over when it stops', async () => {
    const first = new RepairScheduler(h.app);
    const second = new RepairScheduler(h.app);
    // The app's own scheduler ticked above and holds the lock.
    expect(await first.tick()).toBe(false);
    await h.app.repair.stop();
    expect(await first.tick()).toBe(true);
    expect(await second.tick()).toBe(false);
    await first.stop();
    expect(await second.tick()).toBe(true);
    await second.stop();
  });
});

describe('the repair queue view', () => {
  it('answers the queue, the threshold and its basis', async () => {
    const res = await h.call({
      method: 'GET',
      url: '/api/v1/repairs',
      headers: { authorization: admin },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      waitingUnits: 0,
      runningUnits: 0,
      bytes: 0,
      etaSeconds: 0,
      repairAfterMs: REPAIR_AFTER_MS,
      repairAfterBasis: 'configured',
      units: [],
    });
  });
});
