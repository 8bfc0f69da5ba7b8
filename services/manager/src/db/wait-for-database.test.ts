import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { tcpGate as gate } from '../test/tcp-gate.js';
import { waitForDatabase } from './wait-for-database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('waitForDatabase', () => {
  it('waits with backoff for a database that is not up yet, then returns', async () => {
    const g = await gate(new URL(db.url));
    try {
      const notices: string[] = [];
      const waited = waitForDatabase(g.url, (m) => notices.push(m), 120_000);
      const deadline = Date.now() + 60_000;
      while (g.attempts() < 2) {
        if (Date.now() > deadline) throw new Error('no second attempt');
        await new Promise((r) => setTimeout(r, 20));
      }
      g.open();
      await waited;
      expect(notices[0]).toMatch(/not reachable .*; waiting for it/);
      expect(notices.at(-1)).toBe('the database is reachable');
    } finally {
      await g.close();
    }
  });

  it('gives up at once on what waiting cannot fix (a database that does not exist)', async () => {
    const url = new URL(db.url);
    url.pathname = '/no_such_database_here';
    await expect(waitForDatabase(url.toString(), () => undefined, 60_000)).rejects.toThrow(
      /does not exist/,
    );
  });

  it('gives up after its patience', async () => {
    const g = await gate(new URL(db.url));
    try {
      await expect(waitForDatabase(g.url, () => undefined, 300)).rejects.toThrow();
      expect(g.attempts()).toBeGreaterThanOrEqual(1);
    } finally {
      await g.close();
    }
  });
});
