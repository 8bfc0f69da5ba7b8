import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlacement } from '../repositories/placement.js';
import { startHarness, type Harness } from '../test/harness.js';

// A donor's heartbeat says why its governor holds it back; every view a user waits on (the
// donor list, a dataset's map, the transfers of an import) passes the reason on.
let h: Harness;
let admin: string;
let user: string;
let userId: string;

beforeAll(async () => {
  h = await startHarness();
  admin = (await h.login('admin')).authorization;
  ({ authorization: user, userId } = await h.login('scientist'));
});
afterAll(async () => {
  await h?.close();
});

const busy = {
  throttle: 'contended',
  throttleReasons: ['cpu 0.93 > 0.75'],
  rateCap: 262_144,
};

const heartbeat = (authorization: string, body: Record<string, unknown> = {}) =>
  h.call({
    method: 'POST',
    url: '/api/v1/agents/heartbeat',
    headers: { authorization },
    payload: { quotaBytes: 5000, usedBytes: 0, freeBytes: 5000, servingRate: 0, ...body },
  });

const get = async <T>(url: string, authorization = admin): Promise<T> => {
  const res = await h.call({ method: 'GET', url, headers: { authorization } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<T>();
};

describe('throttle reasons', () => {
  it('a heartbeat with reasons → the agent list, the map donors and running transfers show them', async () => {
    const slow = await h.enroll({ name: 'busy-ws' });
    const fine = await h.enroll({ name: 'idle-ws' });
    expect((await heartbeat(slow.auth, busy)).statusCode).toBe(200);
    expect((await heartbeat(fine.auth, { throttle: 'idle', throttleReasons: [] })).statusCode).toBe(
      200,
    );

    const agents = await get<Array<Record<string, unknown>>>('/api/v1/agents');
    expect(agents.find((a) => a.id === slow.agentId)).toMatchObject(busy);
    const idle = agents.find((a) => a.id === fine.agentId)!;
    expect(idle.throttle).toBe('idle');
    expect(idle).not.toHaveProperty('throttleReasons');

    const ds = await h.app.namespaceRepo.createDataset({
      path: 'why/slow.bin',
      sizeBytes: 4 * 65536,
      morselSize: 65536,
      ownerId: userId, // the scientist reading its map below
    });
    await setPlacement(h.app.pg, ds.id, [
      { copy: 0, first: 0, count: 4, unit: 1, phase: 0, donors: [slow.agentId, fine.agentId] },
    ]);
    const map = await get<{ donors: Array<Record<string, unknown>> }>(
      `/api/v1/datasets/${ds.id}/map`,
      user,
    );
    expect(map.donors.find((d) => d.id === slow.agentId)).toMatchObject(busy);
    expect(map.donors.find((d) => d.id === fine.agentId)).not.toHaveProperty('throttleReasons');

    // An import job running on the busy donor, and one still queued (no governor to show).
    const running = await h.app.jobsRepo.enqueue({
      kind: 'import',
      agentId: slow.agentId,
      datasetId: ds.id,
      totalBytes: 2 * 65536,
    });
    expect(await h.app.jobsRepo.claim(slow.agentId, { kinds: ['import'] })).toHaveLength(1);
    const queued = await h.app.jobsRepo.enqueue({
      kind: 'import',
      agentId: fine.agentId,
      datasetId: ds.id,
      totalBytes: 2 * 65536,
    });
    const rows = await get<Array<Record<string, unknown>>>(
      `/api/v1/transfers?datasetId=${ds.id}`,
      user,
    );
    expect(rows.find((r) => r.jobId === running.id)).toMatchObject(busy);
    expect(rows.find((r) => r.jobId === queued.id)).not.toHaveProperty('throttle');

    // The donor recovers: the next heartbeat clears the reasons everywhere.
    await heartbeat(slow.auth, { throttle: 'idle', throttleReasons: [] });
    const after = (await get<Array<Record<string, unknown>>>('/api/v1/agents')).find(
      (a) => a.id === slow.agentId,
    )!;
    expect(after.throttle).toBe('idle');
    expect(after).not.toHaveProperty('throttleReasons');
  });

  it('refuses a heartbeat whose reasons break the bounds', async () => {
    const a = await h.enroll();
    const res = await heartbeat(a.auth, { ...busy, throttleReasons: ['x'.repeat(81)] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_FAILED');
  });
});
