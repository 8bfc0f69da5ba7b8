import { readMigrations } from './db/migrate.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './test/harness.js';
import { systemPostgres } from './db/system-postgres.js';

/**
 * The same smoke as everywhere else, against the machine's own PostgreSQL at 127.0.0.1:5432
 * (trust auth, database `test`) as CI and developers have it, on a throwaway database.
 */
const system = await systemPostgres();
if (!system.url) console.warn(`skipping system PostgreSQL smoke: unreachable (${system.reason})`);

describe.skipIf(!system.url)('on the system PostgreSQL at 127.0.0.1:5432', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({}, {}, system.url);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('migrates, enrolls, heartbeats and lists an agent', async () => {
    const { rows } = await h.app.pg.query('SELECT name FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.name)).toEqual((await readMigrations()).map((m) => m.name));
    const agent = await h.enroll({ name: 'system-pg' });
    const hb = await h.call({
      method: 'POST',
      url: '/api/v1/agents/heartbeat',
      headers: { authorization: agent.auth },
      payload: { quotaBytes: 10, usedBytes: 1, freeBytes: 9, servingRate: 0 },
    });
    expect(hb.statusCode).toBe(200);
    const admin = (await h.login('admin')).authorization;
    const list = await h.call({
      method: 'GET',
      url: '/api/v1/agents',
      headers: { authorization: admin },
    });
    expect(list.json()).toEqual([
      expect.objectContaining({
        id: agent.agentId,
        name: 'system-pg',
        state: 'live',
        freeBytes: 9,
      }),
    ]);
    const reservation = await h.app.reservationsRepo.reserve({ agentId: agent.agentId, bytes: 5 });
    expect(reservation.state).toBe('active');
  });
});
