import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentDiagnostics } from '@freeloader/protocol';
import { startHarness, type Harness } from '../test/harness.js';
import { placementCandidates, type Candidate } from './candidates.js';
import { choosePolicy, planPlacement } from './choose-policy.js';
import { donorSpeeds } from './rate-estimates.js';

describe('choosePolicy', () => {
  it.each<[string, Parameters<typeof choosePolicy>[0], number, number, string]>([
    ['asked for round-robin', { policy: 'round-robin' }, 4, 4, 'round-robin'],
    ['asked for predictive without history', { policy: 'predictive' }, 4, 0, 'predictive'],
    [
      'a host named: asymmetric',
      { hostAgentId: '00000000-0000-4000-8000-000000000001' },
      4,
      0,
      'asymmetric',
    ],
    ['default with history: predictive', {}, 4, 1, 'predictive'],
    ['default without history: round-robin', {}, 4, 0, 'round-robin'],
  ])('%s', (_, req, candidates, withRates, policy) => {
    expect(choosePolicy(req, candidates, withRates).policy).toBe(policy);
  });
});

describe('planPlacement and donor speeds (real manager, real Postgres)', () => {
  let h: Harness;
  let user: { authorization: string; userId: string };
  const agents: Array<{ agentId: string; auth: string }> = [];
  const MB = 1e6;
  const probe = (upload: number, disk: number, download = 100 * MB): AgentDiagnostics => ({
    diskReadRate: disk,
    downloadRate: download,
    uploadRate: upload,
    measuredAt: new Date().toISOString(),
  });
  const beat = (auth: string, extra: Record<string, unknown> = {}) =>
    h.call({
      method: 'POST',
      url: '/api/v1/agents/heartbeat',
      headers: { authorization: auth },
      payload: { quotaBytes: 1e9, usedBytes: 0, freeBytes: 1e9, servingRate: 0, ...extra },
    });
  // The real candidate query: live donors with free space and their throttle state.
  const candidates = (): Promise<Candidate[]> => placementCandidates(h.app);

  beforeAll(async () => {
    h = await startHarness();
    user = await h.login('scientist');
    for (let i = 0; i < 4; i++) agents.push(await h.enroll({ quotaBytes: 4e9, name: `d${i}` }));
    // d0 fast (probe only), d1..d3 slow probes; d3 is the host with a fast disk.
    const probes = [
      probe(110 * MB, 400 * MB),
      probe(11 * MB, 50 * MB),
      probe(11 * MB, 50 * MB),
      probe(11 * MB, 60 * MB, 12 * MB),
    ];
    for (const [i, a] of agents.entries())
      expect((await beat(a.auth, { diagnostics: probes[i] })).statusCode).toBe(200);
    // Probes reach the rows with the batched soft-state write (timers are off here).
    await h.app.liveness.flush();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('stores the join-time probe on the agent row and shows it', async () => {
    const { rows } = await h.app.pg.query<{ upload_rate: number; disk_read_rate: number }>(
      'SELECT upload_rate, disk_read_rate FROM agents WHERE id = $1',
      [agents[0]!.agentId],
    );
    expect(rows[0]).toEqual({ upload_rate: 110 * MB, disk_read_rate: 400 * MB });
  });

  it('predicts from the probe, then history, then this client’s own observations', async () => {
    const ids = agents.map((a) => a.agentId);
    let speeds = await donorSpeeds(h.app, ids, user.userId);
    expect(speeds.rates.get(ids[0]!)).toEqual({ rate: 110 * MB, source: 'probe' });
    // Another client read from d1 at 8 MB/s, this user at 4 MB/s.
    const other = await h.login('scientist');
    for (const [auth, rate] of [
      [other.authorization, 8 * MB],
      [user.authorization, 4 * MB],
    ] as const) {
      const res = await h.call({
        method: 'POST',
        url: '/api/v1/rates',
        headers: { authorization: auth },
        payload: {
          datasetId: ids[0],
          samples: [{ agentId: ids[1], bytes: rate * 2, seconds: 2 }],
          failures: [],
        },
      });
      expect(res.statusCode).toBe(200);
    }
    speeds = await donorSpeeds(h.app, ids, other.userId);
    expect(speeds.rates.get(ids[1]!)).toEqual({ rate: 8 * MB, source: 'pair' });
    speeds = await donorSpeeds(h.app, ids, 'someone-new');
    expect(speeds.rates.get(ids[1]!)?.source).toBe('history');
    expect(speeds.rates.get(ids[1]!)?.rate).toBeCloseTo(0.7 * 8 * MB + 0.3 * 4 * MB, -3);
    speeds = await donorSpeeds(h.app, ids, user.userId);
    expect(speeds.rates.get(ids[1]!)).toEqual({ rate: 4 * MB, source: 'pair' });
  });

  it('defaults to predictive once there is history and splits by rate', async () => {
    const plan = await planPlacement(
      h.app,
      100 * 2 ** 20,
      { uri: 'http://x/y' },
      await candidates(),
      'someone-new',
    );
    expect(plan.policy).toBe('predictive');
    expect(plan.reason).toMatch(/rate history for 1 of 4/);
    const [fast, slow] = [
      plan.bytesPerDonor.get(agents[0]!.agentId)!,
      plan.bytesPerDonor.get(agents[2]!.agentId)!,
    ];
    expect(fast / slow).toBeGreaterThan(8);
  });

  it('asymmetric: local:remote from the host’s disk and its download-capped remote rate', async () => {
    const host = agents[3]!.agentId;
    const plan = await planPlacement(
      h.app,
      1000 * 2 ** 20,
      { uri: 'http://x/y', policy: 'asymmetric', hostAgentId: host },
      await candidates(),
      'someone-new',
    );
    // local 60 MB/s vs remote capped by the host's 12 MB/s link: 60 / 72 of the data stays local
    expect(plan.localShare).toBeCloseTo(60 / 72, 2);
    expect(plan.bytesPerDonor.get(host)! / 2 ** 20).toBeCloseTo(1000 * (60 / 72), -1);
    expect(plan.reason).toMatch(/model: local 60\.0 MB\/s \(probe\), remote 12\.0 MB\/s/);
  });

  it('asymmetric: the host short of space gets less', async () => {
    const host = agents[3]!.agentId;
    const cands = (await candidates()).map((c) =>
      c.id === host ? { ...c, freeBytes: 100 * 2 ** 20 } : c,
    );
    const plan = await planPlacement(
      h.app,
      1000 * 2 ** 20,
      { uri: 'http://x/y', hostAgentId: host },
      cands,
      'x',
    );
    expect(plan.policy).toBe('asymmetric');
    expect(plan.bytesPerDonor.get(host)!).toBeLessThanOrEqual(100 * 2 ** 20);
    expect(plan.reason).toMatch(/host-space/);
  });

  it.each([
    [{ policy: 'asymmetric' as const }, 'VALIDATION_FAILED'],
    [
      { policy: 'asymmetric' as const, hostAgentId: '00000000-0000-4000-8000-000000000009' },
      'NO_DONORS',
    ],
  ])('asymmetric without a live host is refused (%o)', async (req, code) => {
    await expect(
      planPlacement(h.app, 2 ** 20, { uri: 'http://x/y', ...req }, await candidates(), 'x'),
    ).rejects.toMatchObject({ code });
  });

  it('avoids active owners while idle donors suffice, else widens the stripe', async () => {
    const rr = { uri: 'http://x/y', policy: 'round-robin' as const };
    await beat(agents[1]!.auth, { throttle: 'active' });
    let plan = await planPlacement(
      h.app,
      64 * 2 ** 20,
      { ...rr, width: 2 },
      await candidates(),
      'x',
    );
    expect(plan.width).toBe(2);
    expect(plan.bytesPerDonor.has(agents[1]!.agentId)).toBe(false);
    await beat(agents[2]!.auth, { throttle: 'contended' });
    plan = await planPlacement(h.app, 64 * 2 ** 20, { ...rr, width: 3 }, await candidates(), 'x');
    expect(plan.width).toBe(4);
    expect(plan.reason).toMatch(/width 4 because \d owner\(s\) are active/);
    for (const a of agents.slice(1, 3)) await beat(a.auth, { throttle: 'idle' });
  });

  it('serves diagnostic probes to agents only', async () => {
    const auth = agents[0]!.auth;
    const down = await h.call({
      method: 'GET',
      url: '/api/v1/diagnostics/download?bytes=3000000',
      headers: { authorization: auth },
    });
    expect(down.statusCode).toBe(200);
    expect(down.rawPayload.length).toBe(3_000_000);
    const up = await h.call({
      method: 'POST',
      url: '/api/v1/diagnostics/upload',
      headers: { authorization: auth, 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(2_500_000),
    });
    expect(up.json()).toEqual({ received: 2_500_000 });
    const anon = await h.call({
      method: 'GET',
      url: '/api/v1/diagnostics/download?bytes=10',
      headers: { authorization: user.authorization },
    });
    expect(anon.statusCode).toBeGreaterThanOrEqual(401);
  });
});
