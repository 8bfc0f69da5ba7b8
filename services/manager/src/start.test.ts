import { createServer, type AddressInfo } from 'node:net';
import { chmod, lstat, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startManager } from './start.js';
import { freePort } from './testing/free-port.js';

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
    // Two starts of a real PostgreSQL (one with initdb) on a busy 2-core machine.
  }, 120_000);

  it('moves its PostgreSQL off a taken port, remembers the new one, keeps the data in the home', async () => {
    const own = await mkdtemp(join(tmpdir(), 'fl-home-port-'));
    const blocker = createServer();
    try {
      // Another server holds the port this home's PostgreSQL used last time (as another
      // PostgreSQL on 7432 would on a first start).
      await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
      const taken = (blocker.address() as AddressInfo).port;
      await mkdir(join(own, 'manager'), { recursive: true });
      await writeFile(join(own, 'manager', 'pg-port'), `${taken}\n`);
      const overrides = { home: own, port: 0, logLevel: 'silent' as const };

      const first = await startManager(overrides);
      let used: number;
      try {
        used = Number(new URL(first.config.databaseUrl!).port);
        expect(used).not.toBe(taken);
        expect((await readFile(join(own, 'manager', 'pg-port'), 'utf8')).trim()).toBe(String(used));
        const data = join(own, 'manager', 'pgdata');
        expect((await lstat(data)).isDirectory()).toBe(true);
        expect((await stat(join(data, 'PG_VERSION'))).isFile()).toBe(true);
        expect((await fetch(`${first.url}/api/v1/health`)).status).toBe(200);
      } finally {
        await first.close();
      }

      const second = await startManager(overrides);
      try {
        expect(Number(new URL(second.config.databaseUrl!).port)).toBe(used);
        expect(second.adminPassword).toBeNull();
      } finally {
        await second.close();
      }

      // Pinned to a taken port: a clear error that names the variable, nothing started.
      await expect(startManager({ ...overrides, embeddedPgPort: taken })).rejects.toThrow(
        /EMBEDDED_PG_PORT=\d+ is already in use/,
      );
    } finally {
      await new Promise((r) => blocker.close(r));
      await rm(own, { recursive: true, force: true });
    }
  }, 120_000);

  it('fails fast with the bad keys named when the configuration is wrong', async () => {
    await expect(startManager({ home, port: 99_999 })).rejects.toThrow(/MANAGER_PORT/);
  });
});
