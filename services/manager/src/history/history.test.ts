import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { HistoryResponse } from '@freeloader/protocol';
import { buildApp } from '../app.js';
import { compactHistory, insertSamples, readHistory } from '../repositories/history.js';
import { startHarness, testConfig, type Harness } from '../test/harness.js';
import { sampleIntervalS } from './plugin.js';

// Real PostgreSQL; the sampler is driven by hand (timers off) so each sample is deliberate.
let h: Harness;
let user: string;
let donor: { agentId: string; auth: string };

beforeAll(async () => {
  h = await startHarness();
  user = (await h.login('scientist')).authorization;
  donor = await h.enroll({ name: 'hist-donor', quotaBytes: 10_000_000 });
  const hb = await h.call({
    method: 'POST',
    url: '/api/v1/agents/heartbeat',
    headers: { authorization: donor.auth },
    payload: { quotaBytes: 10_000_000, usedBytes: 0, freeBytes: 10_000_000, servingRate: 12_345 },
  });
  expect(hb.statusCode, hb.body).toBe(200);
  await h.app.pg.query('UPDATE agents SET used_bytes = 4242 WHERE id = $1', [donor.agentId]);
});
afterAll(async () => {
  await h?.close();
});

async function history(app: FastifyInstance, qs: string): Promise<HistoryResponse> {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v1/history?${qs}`,
    headers: { authorization: user },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('history sampler', () => {
  it('samples donors and keeps the history across a manager restart', async () => {
    await h.app.history.sampleNow();
    await h.app.history.sampleNow();
    const used = await history(h.app, `series=donor_used&subject=${donor.agentId}`);
    expect(used.subjects).toHaveLength(1);
    expect(used.subjects[0]!.points.map((p) => p.value)).toEqual([4242, 4242]);
    const serving = await history(h.app, `series=donor_serving&subject=${donor.agentId}`);
    expect(serving.subjects[0]!.points.at(-1)!.value).toBe(12_345);
    const up = await history(h.app, `series=donor_up&subject=${donor.agentId}`);
    expect(up.subjects[0]!.points.at(-1)!.value).toBe(1);
    const total = await history(h.app, 'series=import_rate');
    expect(total.subjects[0]).toMatchObject({ subject: null });

    // A second manager on the same database (the first one closed, its memory gone; the
    // session stays valid as it lives in PostgreSQL too) still serves the same history.
    await h.app.close();
    const again = await buildApp(testConfig(h.db.url), { timers: false });
    try {
      const after = await history(again, `series=donor_used&subject=${donor.agentId}`);
      expect(after.subjects[0]!.points).toEqual(used.subjects[0]!.points);
      // The restarted manager has not heard from the donor: it samples it as down.
      await again.history.sampleNow();
      const upAfter = await history(again, `series=donor_up&subject=${donor.agentId}`);
      expect(upAfter.subjects[0]!.points.map((p) => p.value)).toEqual([1, 1, 0]);
    } finally {
      await again.close();
    }
    // The harness closes its own app again at the end; give it a fresh one.
    h.app = await buildApp(testConfig(h.db.url), { timers: false });
  });

  it('rejects an unknown series (400) and needs a session (401)', async () => {
    const bad = await h.app.inject({
      method: 'GET',
      url: '/api/v1/history?series=nope',
      headers: { authorization: user },
    });
    expect(bad.statusCode).toBe(400);
    expect(
      (await h.app.inject({ method: 'GET', url: '/api/v1/history?series=donor_up' })).statusCode,
    ).toBe(401);
  });
});

describe('compactHistory', () => {
  it('folds old raw samples into bucket averages and drops what is past the horizon', async () => {
    const subject = '11111111-1111-4111-8111-111111111111';
    const now = Date.now();
    const bucket = 600_000;
    // Two raw samples two days ago in one 10-minute bucket, one 40 days ago, one just now.
    const old = Math.floor((now - 2 * 86_400_000) / bucket) * bucket + 60_000;
    await insertSamples(h.app.pg, [{ series: 'dataset_rate', subject, value: 10 }], new Date(old));
    await insertSamples(
      h.app.pg,
      [{ series: 'dataset_rate', subject, value: 30 }],
      new Date(old + 120_000),
    );
    await insertSamples(
      h.app.pg,
      [{ series: 'dataset_rate', subject, value: 99 }],
      new Date(now - 40 * 86_400_000),
    );
    await insertSamples(h.app.pg, [{ series: 'dataset_rate', subject, value: 5 }]);

    const r = await compactHistory(h.app.pg, {
      rawKeepS: 86_400,
      bucketS: 600,
      keepS: 30 * 86_400,
    });
    expect(r).toEqual({ folded: 2, dropped: 1 });
    const [series] = await readHistory(h.app.pg, 'dataset_rate', subject, 60 * 86_400);
    expect(series!.points.map((p) => [p.value, p.resolutionS])).toEqual([
      [20, 600],
      [5, 0],
    ]);
    expect(Date.parse(series!.points[0]!.at) % bucket).toBe(0);
    // Compacting again changes nothing: the table is bounded, not rewritten.
    expect(
      await compactHistory(h.app.pg, { rawKeepS: 86_400, bucketS: 600, keepS: 30 * 86_400 }),
    ).toEqual({ folded: 0, dropped: 0 });
  });
});

describe('sampleIntervalS', () => {
  it.each([
    [{}, 30],
    [{ FREELOADER_HISTORY_SAMPLE_S: '0.5' }, 0.5],
    [{ FREELOADER_HISTORY_SAMPLE_S: '0' }, 30],
    [{ FREELOADER_HISTORY_SAMPLE_S: 'abc' }, 30],
  ])('%j → %d s', (env, expected) => {
    expect(sampleIntervalS(env)).toBe(expected);
  });
});
