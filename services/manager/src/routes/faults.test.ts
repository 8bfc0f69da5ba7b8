import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FreeLoaderEvent } from '@freeloader/protocol';
import { setPlacement } from '../repositories/placement.js';
import { startHarness, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const post = (url: string, auth: string, payload: Record<string, unknown>) =>
  h.call({ method: 'POST', url, headers: { authorization: auth }, payload });

/** A site-readable dataset of 4 morsels striped over a and b: a holds 0 and 2, b 1 and 3. */
async function striped() {
  const a = await h.enroll();
  const b = await h.enroll();
  const ds = await h.app.namespaceRepo.createDataset({
    path: `faults/${a.agentId}`,
    sizeBytes: 4 * 65536,
    morselSize: 65536,
  });
  await setPlacement(h.app.pg, ds.id, [
    { copy: 0, first: 0, count: 4, unit: 1, phase: 0, donors: [a.agentId, b.agentId] },
  ]);
  // Shared with the site: the reporting clients below are users who may read it.
  await h.app.ownershipRepo.share({ kind: 'dataset', id: ds.id }, null, false);
  return { a, b, ds };
}

const rows = async (datasetId: string) =>
  (
    await h.app.pg.query<{ morsel: number; agent_id: string; reason: string; reported_by: string }>(
      'SELECT morsel, agent_id, reason, reported_by FROM morsel_faults WHERE dataset_id = $1 ORDER BY morsel',
      [datasetId],
    )
  ).rows;

describe('POST /agents/me/faults', () => {
  it('records the copies the calling donor holds, ignores others, publishes one event per group, and the map lists them', async () => {
    const { a, ds } = await striped();
    const events: FreeLoaderEvent[] = [];
    const off = h.app.events.subscribe((e) => events.push(e));
    const res = await post('/api/v1/agents/me/faults', a.auth, {
      faults: [
        { datasetId: ds.id, morsel: 2, reason: 'corrupt', reportedBy: 'scrub' },
        { datasetId: ds.id, morsel: 0, reason: 'missing', reportedBy: 'startup' },
        { datasetId: ds.id, morsel: 1, reason: 'missing', reportedBy: 'startup' }, // b's
      ],
    });
    off();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ recorded: 2, ignored: 1 });
    expect(await rows(ds.id)).toEqual([
      { morsel: 0, agent_id: a.agentId, reason: 'missing', reported_by: 'startup' },
      { morsel: 2, agent_id: a.agentId, reason: 'corrupt', reported_by: 'scrub' },
    ]);
    expect(events.filter((e) => e.type === 'fault')).toEqual([
      {
        type: 'fault',
        datasetId: ds.id,
        agentId: a.agentId,
        morsels: 1,
        reason: 'corrupt',
        reportedBy: 'scrub',
      },
      {
        type: 'fault',
        datasetId: ds.id,
        agentId: a.agentId,
        morsels: 1,
        reason: 'missing',
        reportedBy: 'startup',
      },
    ]);
    const map = await h.call({
      method: 'GET',
      url: `/api/v1/datasets/${ds.id}/map`,
      headers: { authorization: a.auth },
    });
    expect(map.json().badCopies).toEqual([
      { morsel: 0, donor: a.agentId },
      { morsel: 2, donor: a.agentId },
    ]);
  });

  it.each([
    ['no faults', { faults: [] }, 400],
    [
      'a bad reason',
      {
        faults: [
          {
            datasetId: '00000000-0000-4000-8000-000000000000',
            morsel: 0,
            reason: 'odd',
            reportedBy: 'scrub',
          },
        ],
      },
      400,
    ],
    [
      'a client as reporter',
      {
        faults: [
          {
            datasetId: '00000000-0000-4000-8000-000000000000',
            morsel: 0,
            reason: 'corrupt',
            reportedBy: 'client',
          },
        ],
      },
      400,
    ],
  ])('refuses %s', async (_label, body, status) => {
    const { a } = await striped();
    expect((await post('/api/v1/agents/me/faults', a.auth, body)).statusCode).toBe(status);
  });

  it('is for agents only', async () => {
    const user = await h.login();
    const res = await post('/api/v1/agents/me/faults', user.authorization, {
      faults: [
        {
          datasetId: '00000000-0000-4000-8000-000000000000',
          morsel: 0,
          reason: 'corrupt',
          reportedBy: 'scrub',
        },
      ],
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('POST /datasets/:id/faults (a client read a bad hash)', () => {
  it('records a copy the named donor holds; a donor without that copy is refused whole', async () => {
    const { a, b, ds } = await striped();
    const user = await h.login();
    const bogus = await post(`/api/v1/datasets/${ds.id}/faults`, user.authorization, {
      faults: [
        { morsel: 1, donor: b.agentId },
        { morsel: 1, donor: a.agentId }, // a never had morsel 1
      ],
    });
    expect(bogus.statusCode).toBe(403);
    expect(bogus.json().error.code).toBe('FORBIDDEN');
    expect(await rows(ds.id)).toEqual([]);
    const ok = await post(`/api/v1/datasets/${ds.id}/faults`, user.authorization, {
      faults: [{ morsel: 1, donor: b.agentId }],
    });
    expect(ok.json()).toEqual({ recorded: 1, ignored: 0 });
    expect(await rows(ds.id)).toEqual([
      { morsel: 1, agent_id: b.agentId, reason: 'corrupt', reported_by: 'client' },
    ]);
  });

  it('answers 404 for an unknown dataset and 429 past the per-minute limit', async () => {
    const { b, ds } = await striped();
    const user = await h.login();
    const unknown = await post(
      '/api/v1/datasets/00000000-0000-4000-8000-000000000000/faults',
      user.authorization,
      { faults: [{ morsel: 1, donor: b.agentId }] },
    );
    expect(unknown.statusCode).toBe(404);
    // Ten bad-hash reports at a time (the same copy: recorded once): the 61st in a minute is refused.
    const ten = { faults: Array.from({ length: 10 }, () => ({ morsel: 1, donor: b.agentId })) };
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await post(`/api/v1/datasets/${ds.id}/faults`, user.authorization, ten);
      statuses.push(res.statusCode);
      if (res.statusCode === 429) expect(res.json().error.code).toBe('RATE_LIMITED');
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(6);
    expect(statuses.slice(0, statuses.indexOf(429)).every((s) => s === 200)).toBe(true);
    expect(await rows(ds.id)).toHaveLength(1);
  });
});
