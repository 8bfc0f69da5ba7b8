import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { TEST_MASTER_KEY_FILE } from '../test/master-key.js';
import { createPool } from './pool.js';
import { migrate, readMigrations } from './migrate.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('migrate', () => {
  it('applies each migration exactly once, even when two managers boot together', async () => {
    const a = createPool(db.url);
    const b = createPool(db.url);
    try {
      const shipped = await readMigrations();
      expect(shipped.length).toBeGreaterThanOrEqual(2);
      const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
      expect([...ra, ...rb].sort()).toEqual(shipped.map((m) => m.name));
      expect(await migrate(a)).toEqual([]);
      const { rows } = await a.query(
        'SELECT version, name FROM schema_migrations ORDER BY version',
      );
      expect(rows).toEqual(shipped.map((m) => ({ version: m.version, name: m.name })));
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });

  it('boots the app twice on one database (second boot migrates nothing)', async () => {
    const config = loadConfig(
      {},
      { databaseUrl: db.url, logLevel: 'silent', masterKeyFile: TEST_MASTER_KEY_FILE },
    );
    const first = await buildApp(config, { timers: false });
    const key = first.signingKeys.publicKeyPem;
    await first.close();
    const second = await buildApp(config, { timers: false });
    try {
      expect(second.signingKeys.publicKeyPem).toBe(key);
      const res = await second.inject({ method: 'GET', url: '/api/v1/health' });
      expect(res.statusCode).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('rolls back a failing migration whole and reports it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fl-mig-'));
    const other = await createTestDatabase();
    const pool = createPool(other.url);
    try {
      await writeFile(join(dir, '001_ok.sql'), 'CREATE TABLE ok (id int);');
      await writeFile(join(dir, '002_bad.sql'), 'CREATE TABLE nope (id nosuchtype);');
      await expect(migrate(pool, dir)).rejects.toThrow(/nosuchtype/);
      const { rowCount } = await pool.query("SELECT 1 FROM pg_tables WHERE tablename = 'ok'");
      expect(rowCount).toBe(0);
    } finally {
      await pool.end();
      await other.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('orders files by number and refuses duplicate versions', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fl-mig-'));
    try {
      await writeFile(join(dir, '010_b.sql'), '');
      await writeFile(join(dir, '002_a.sql'), '');
      await writeFile(join(dir, 'README.md'), '');
      expect((await readMigrations(dir)).map((m) => m.name)).toEqual(['002_a', '010_b']);
      await writeFile(join(dir, '002_c.sql'), '');
      await expect(readMigrations(dir)).rejects.toThrow(/share version 2/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
