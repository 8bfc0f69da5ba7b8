import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
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

describe('dead-donor watch (on the donor-loss hook)', () => {
  it('fails an import whose dead donor’s share fits nowhere, naming the donor', async () => {
    const silent = await h.enroll({ name: 'silent', quotaBytes: 64 * MiB });
    const alive = await h.enroll({ name: 'alive', quotaBytes: 64 * MiB });
    const user = await h.login('scientist');
    const res = await h.call({
      method: 'POST',
      url: '/api/v1/datasets',
      headers: user,
      payload: { uri: src.url, name: 'dead/donor.bin' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json<{ dataset: { id: string } }>().dataset.id;

    now += 20_000;
    expect((await heartbeat(alive.auth)).statusCode).toBe(200);
    h.app.softState.sweep();
    expect(h.app.softState.stateOf(silent.agentId)).toBe('dead');

    const d = await until(
      () => h.app.namespaceRepo.get(id),
      (v) => v?.state === 'failed',
    );
    // Two donors, two copies: the live one holds the other copy of every morsel.
    expect(d?.state).toBe('failed');
    expect(d?.error).toMatch(
      new RegExp(`^donor ${silent.agentId} died during the import and no other donor has room`),
    );
    const { rows } = await h.app.pg.query<{ state: string; error_code: string }>(
      `SELECT state, error_code FROM jobs WHERE dataset_id = $1 AND agent_id = $2 AND kind = 'import'`,
      [id, silent.agentId],
    );
    expect(rows).toEqual([{ state: 'failed', error_code: 'UNAVAILABLE' }]);
  });
});
