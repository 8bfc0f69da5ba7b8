import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const reserve = (auth: string, body: Record<string, unknown>) =>
  h.call({
    method: 'POST',
    url: '/api/v1/reservations',
    headers: { authorization: auth },
    payload: body,
  });

const expire = (id: string) =>
  h.app.pg.query(`UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = $1`, [
    id,
  ]);

describe('reservations', () => {
  it('lets exactly one of two racing clients take the last free space', async () => {
    for (let round = 0; round < 5; round++) {
      const agent = await h.enroll({ quotaBytes: 1000 });
      const first = await reserve(agent.auth, { agentId: agent.agentId, bytes: 400 });
      expect(first.statusCode).toBe(201);
      // 600 left; each racer wants 600.
      const racers = await Promise.all([
        h.app.reservationsRepo.reserve({ agentId: agent.agentId, bytes: 600 }).then(
          () => 'won',
          (e: { code?: string }) => e.code,
        ),
        h.app.reservationsRepo.reserve({ agentId: agent.agentId, bytes: 600 }).then(
          () => 'won',
          (e: { code?: string }) => e.code,
        ),
      ]);
      expect(racers.sort()).toEqual(['NO_SPACE', 'won']);
    }
  });

  it('answers 507 NO_SPACE with the free bytes when the agent is full', async () => {
    const agent = await h.enroll({ quotaBytes: 100 });
    const res = await reserve(agent.auth, { agentId: agent.agentId, bytes: 101 });
    expect(res.statusCode).toBe(507);
    expect(res.json().error).toMatchObject({ code: 'NO_SPACE', details: { freeBytes: 100 } });
  });

  it('does not count expired reservations, and sweeps them', async () => {
    const agent = await h.enroll({ quotaBytes: 1000 });
    const r = (await reserve(agent.auth, { agentId: agent.agentId, bytes: 1000 })).json();
    expect((await reserve(agent.auth, { agentId: agent.agentId, bytes: 1 })).statusCode).toBe(507);
    await expire(r.id);
    expect((await reserve(agent.auth, { agentId: agent.agentId, bytes: 1000 })).statusCode).toBe(
      201,
    );
    const { rows } = await h.app.pg.query('SELECT state FROM reservations WHERE id = $1', [r.id]);
    expect(rows[0].state).toBe('expired');
    const commit = await h.call({
      method: 'POST',
      url: `/api/v1/reservations/${r.id}/commit`,
      headers: { authorization: agent.auth },
    });
    expect(commit.statusCode).toBe(410);
    expect(commit.json().error.code).toBe('RESERVATION_EXPIRED');
  });

  it('commit moves bytes into used; releasing a commit gives them back', async () => {
    const agent = await h.enroll({ quotaBytes: 1000 });
    const r = (await reserve(agent.auth, { agentId: agent.agentId, bytes: 700 })).json();
    const url = `/api/v1/reservations/${r.id}`;
    const commit = await h.call({
      method: 'POST',
      url: `${url}/commit`,
      headers: { authorization: agent.auth },
    });
    expect(commit.json()).toMatchObject({ id: r.id, state: 'committed', bytes: 700 });
    // Committing twice is harmless.
    expect(
      (
        await h.call({
          method: 'POST',
          url: `${url}/commit`,
          headers: { authorization: agent.auth },
        })
      ).statusCode,
    ).toBe(200);
    expect((await h.app.agentsRepo.get(agent.agentId))?.usedBytes).toBe(700);
    expect((await reserve(agent.auth, { agentId: agent.agentId, bytes: 301 })).statusCode).toBe(
      507,
    );

    const release = await h.call({ method: 'DELETE', url, headers: { authorization: agent.auth } });
    expect(release.json().state).toBe('released');
    expect((await h.app.agentsRepo.get(agent.agentId))?.usedBytes).toBe(0);
    const again = await h.call({
      method: 'POST',
      url: `${url}/commit`,
      headers: { authorization: agent.auth },
    });
    expect(again.statusCode).toBe(409);
  });

  it('reports reserved bytes in the agent list', async () => {
    const admin = (await h.login('admin')).authorization;
    const agent = await h.enroll({ quotaBytes: 1000 });
    await reserve(agent.auth, { agentId: agent.agentId, bytes: 250 });
    const list = await h.call({
      method: 'GET',
      url: '/api/v1/agents',
      headers: { authorization: admin },
    });
    expect(list.json().find((a: { id: string }) => a.id === agent.agentId).reservedBytes).toBe(250);
  });

  it.each([
    ['another agent reserves on it', 403, 'FORBIDDEN'],
    ['another agent commits it', 404, 'RESERVATION_NOT_FOUND'],
  ])('keeps agents to their own space: %s', async (what, status, code) => {
    const owner = await h.enroll();
    const other = await h.enroll();
    const res = what.includes('reserves')
      ? await reserve(other.auth, { agentId: owner.agentId, bytes: 1 })
      : await h.call({
          method: 'POST',
          url: `/api/v1/reservations/${(await reserve(owner.auth, { agentId: owner.agentId, bytes: 1 })).json().id}/commit`,
          headers: { authorization: other.auth },
        });
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(code);
  });

  it.each([
    [{ agentId: 'nope', bytes: 1 }, 400],
    [{ agentId: '00000000-0000-4000-8000-000000000000', bytes: 0 }, 400],
    [{ agentId: '00000000-0000-4000-8000-000000000000', bytes: 1 }, 404],
  ])('validates %o → %i', async (body, status) => {
    const user = (await h.login('scientist')).authorization;
    const res = await reserve(user, body);
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBeTypeOf('string');
  });
});
