import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB, donorsOfMorsel } from '@freeloader/protocol';
import { getPlacement } from '../repositories/placement.js';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { startHarness, type Harness } from '../test/harness.js';

// Real PostgreSQL, a real HTTP source, two enrolled donors that never claim their jobs, and soft
// state on an injected clock: one donor goes silent until it is declared dead.
let h: Harness;
let src: TestServer;
let now = 0;
const clock = () => now;

beforeAll(async () => {
  h = await startHarness({ staleAfterMs: 1_000, deadAfterMs: 10_000 }, { clock });
  src = await startTestServer({ size: 4 * MiB + 5 });
});
afterAll(async () => {
  await h?.close();
  await src?.close();
});

const heartbeat = (authorization: string) =>
  h.call({
    method: 'POST',
    url: '/api/v1/agents/heartbeat',
    headers: { authorization },
    payload: { quotaBytes: 64 * MiB, usedBytes: 0, freeBytes: 64 * MiB, servingRate: 0 },
  });

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  return read();
}

// One importer: both datasets go in its folder `dead` (only its owner may create there).
let user: { authorization: string } | undefined;
const importOf = async (payload: object): Promise<string> => {
  user ??= await h.login('scientist');
  const res = await h.call({
    method: 'POST',
    url: '/api/v1/datasets',
    headers: user,
    payload: { uri: src.url, morselSize: MiB, ...payload },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ dataset: { id: string } }>().dataset.id;
};

/** Donors kept alive across tests (their authorization). */
const living: string[] = [];

/** Let `silent` go quiet past DEAD_AFTER_MS while every living donor keeps heartbeating. */
async function kill(silent: string): Promise<void> {
  now += 20_000;
  for (const auth of living) expect((await heartbeat(auth)).statusCode).toBe(200);
  h.app.softState.sweep();
  expect(h.app.softState.stateOf(silent)).toBe('dead');
}

const importJobs = async (datasetId: string) =>
  (
    await h.app.pg.query<{ agent_id: string; state: string; error_code: string | null }>(
      `SELECT agent_id, state, error_code FROM jobs WHERE dataset_id = $1 AND kind = 'import'`,
      [datasetId],
    )
  ).rows;

describe('dead-donor watch (on the donor-loss hook)', () => {
  it('n = 2 with nowhere to move: the other copies finish the import, under-replicated', async () => {
    const silent = await h.enroll({ name: 'silent', quotaBytes: 64 * MiB });
    const alive = await h.enroll({ name: 'alive', quotaBytes: 64 * MiB });
    living.push(alive.auth);
    const id = await importOf({ name: 'dead/covered.bin', replicas: 2 });
    await kill(silent.agentId);

    const jobs = await until(
      () => importJobs(id),
      (rows) => rows.some((r) => r.agent_id === silent.agentId && r.state === 'failed'),
    );
    expect(jobs.find((r) => r.agent_id === silent.agentId)).toMatchObject({
      state: 'failed',
      error_code: 'UNAVAILABLE',
    });
    // The live donor holds the other copy of every morsel: its job carries on.
    expect(jobs.find((r) => r.agent_id === alive.agentId)?.state).toBe('queued');
    expect((await h.app.namespaceRepo.get(id))?.state).toBe('importing');
  });

  it('moves a dead donor’s share to a live donor with room and releases its space', async () => {
    const silent = await h.enroll({ name: 'silent-2', quotaBytes: 64 * MiB });
    const alive = await h.enroll({ name: 'alive-2', quotaBytes: 64 * MiB });
    living.push(alive.auth);
    // Every live donor: the silent one surely holds a share.
    const id = await importOf({ name: 'dead/moved.bin', replicas: 1, width: 3 });
    const before = (await importJobs(id)).length;
    await kill(silent.agentId);

    // One new job per donor that took part of the share over.
    await until(
      () => importJobs(id),
      (rows) => rows.length > before,
    );
    const placement = await getPlacement(h.app.pg, id);
    for (let m = 0; m < 5; m++) {
      const holders = donorsOfMorsel(placement, m);
      expect(holders, `morsel ${m}`).toHaveLength(1);
      expect(holders, `morsel ${m}`).not.toContain(silent.agentId);
    }
    const { rows } = await h.app.pg.query<{ state: string }>(
      `SELECT state FROM reservations WHERE dataset_id = $1 AND agent_id = $2`,
      [id, silent.agentId],
    );
    expect(rows.map((r) => r.state)).toEqual(['released']);
    expect((await h.app.namespaceRepo.get(id))?.state).toBe('importing');
  });
});
