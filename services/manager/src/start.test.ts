import { mkdtemp, readFile, rm, stat, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startManager } from './start.js';
import { freePort } from './test/free-port.js';

let home: string;
const savedDatabaseUrl = process.env.DATABASE_URL;
beforeAll(async () => {
  // These tests are about the embedded server: a DATABASE_URL in the environment would bypass it.
  delete process.env.DATABASE_URL;
  home = await mkdtemp(join(tmpdir(), 'fl-home-'));
  await chmod(home, 0o700);
});
afterAll(async () => {
  if (savedDatabaseUrl !== undefined) process.env.DATABASE_URL = savedDatabaseUrl;
  await rm(home, { recursive: true, force: true });
});

describe('startManager with an embedded PostgreSQL', () => {
  it('creates the first admin once, keeps keys and data across restarts', async () => {
    const overrides = {
      home,
      port: 0,
      embeddedPgPort: await freePort(),
      logLevel: 'silent' as const,
    };
    const first = await startManager(overrides);
    let publicKey: string;
    try {
      expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(first.adminPassword).toEqual(expect.any(String));
      const file = join(home, 'manager', 'admin-password');
      expect((await readFile(file, 'utf8')).trim()).toBe(first.adminPassword);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(join(home, 'manager', 'pg-password'))).mode & 0o777).toBe(0o600);

      const login = await fetch(`${first.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: first.adminPassword }),
      });
      expect(login.status).toBe(200);
      publicKey = first.app.signingKeys.publicKeyPem;
    } finally {
      await first.close();
    }
    await first.close(); // idempotent

    const second = await startManager(overrides);
    try {
      expect(second.adminPassword).toBeNull();
      expect(second.app.signingKeys.publicKeyPem).toBe(publicKey);
      const health = await fetch(`${second.url}/api/v1/health`);
      expect(health.status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('fails fast with the bad keys named when the configuration is wrong', async () => {
    await expect(startManager({ home, port: 99_999 })).rejects.toThrow(/MANAGER_PORT/);
  });
});
