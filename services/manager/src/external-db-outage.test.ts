import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { createTestDatabase, type TestDatabase } from './test/db.js';
import { TEST_MASTER_KEY_FILE } from './test/master-key.js';
import { tcpGate, type TcpGate } from './test/tcp-gate.js';

let db: TestDatabase;
let gate: TcpGate;
beforeAll(async () => {
  db = await createTestDatabase();
  gate = await tcpGate(new URL(db.url));
  gate.open();
});
afterAll(async () => {
  await gate?.close();
  await db?.drop();
});

describe('a manager on an external PostgreSQL that goes away', () => {
  it('answers 503 with Retry-After while it is gone and 200 once it is back', async () => {
    const app = await buildApp(
      loadConfig(
        {},
        {
          databaseUrl: gate.url,
          logLevel: 'silent',
          home: '/nonexistent',
          masterKeyFile: TEST_MASTER_KEY_FILE,
        },
      ),
      { timers: false },
    );
    try {
      const health = () => app.inject({ method: 'GET', url: '/api/v1/health' });
      const login = () =>
        app.inject({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { username: 'nobody', password: 'nothing' },
        });
      expect((await health()).statusCode).toBe(200);
      expect((await login()).statusCode).toBe(401);

      gate.shut();
      for (const res of [await health(), await login()]) {
        expect(res.statusCode).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.json().error.code).toBe('UNAVAILABLE');
      }

      gate.open();
      // The pool reconnects on the next request: no restart, no waiting.
      expect((await health()).statusCode).toBe(200);
      expect((await login()).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });
});
