import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_KEY_BYTES } from '@freeloader/protocol';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { startHarness, type Harness } from '../test/harness.js';
import { newDataKey } from './dataset-keys.js';
import { deleteSetting, getSetting, putSettingOnce } from './settings.js';

/**
 * Issue 17: the master key that wraps dataset keys lives in a 0600 file, never in the
 * database. A dump of the database alone opens nothing; a manager with the wrong file (or
 * none, on a database whose keys another manager wrapped) refuses to start and names the file
 * to copy; an older database's in-settings key moves out to the file at start.
 */
let dir: string;
let h: Harness;
let seq = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fl-master-key-'));
  h = await startHarness({ masterKeyFile: join(dir, 'first.key') });
});
afterAll(async () => {
  await h?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Another manager on the database of `on` (the harness's by default), with `keyFile`. */
function secondManager(keyFile: string, on: Harness = h): Promise<FastifyInstance> {
  return buildApp(
    loadConfig(
      {},
      { databaseUrl: on.db.url, logLevel: 'silent', home: '/nonexistent', masterKeyFile: keyFile },
    ),
    { timers: false },
  );
}

async function dataset(on: Harness = h): Promise<string> {
  const ds = await on.app.namespaceRepo.createDataset({
    path: `keys/d${++seq}.bin`,
    sizeBytes: 10,
    sourceUri: 'https://example.org/d.bin',
    state: 'ready',
  });
  return ds.id;
}

/** Every row of the tables a key could hide in, as text (what a dump of them holds). */
async function dumpOfKeyTables(on: Harness = h): Promise<string> {
  const { rows } = await on.app.pg.query<{ row: string }>(
    `SELECT row_to_json(s)::text AS row FROM settings s
     UNION ALL SELECT row_to_json(d)::text FROM datasets d
     UNION ALL SELECT row_to_json(t)::text FROM morsel_tags t`,
  );
  return rows.map((r) => r.row).join('\n');
}

/** The key as a dump could spell it: base64, hex, and PostgreSQL's bytea hex. */
function spellings(key: Buffer): string[] {
  return [key.toString('base64'), key.toString('hex'), key.toString('base64url')];
}

describe('master key file', () => {
  it('is created at first start, mode 0600, holding a 32-byte key', async () => {
    const file = join(dir, 'first.key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
    expect(key.length).toBe(DATA_KEY_BYTES);
  });

  it('is nowhere in a dump of the settings and dataset tables', async () => {
    const id = await dataset();
    const dataKey = await h.app.dataKeys.create(id);
    const master = Buffer.from((await readFile(join(dir, 'first.key'), 'utf8')).trim(), 'base64');
    const dump = await dumpOfKeyTables();
    expect(dump).toContain(id);
    for (const s of [...spellings(master), ...spellings(dataKey)]) expect(dump).not.toContain(s);
  });

  it('a restart with the same file reads the datasets encrypted before', async () => {
    const id = await dataset();
    const key = await h.app.dataKeys.create(id);
    const again = await secondManager(join(dir, 'first.key'));
    try {
      expect((await again.dataKeys.get(id))?.equals(key)).toBe(true);
    } finally {
      await again.close();
    }
  });

  it('a manager with another key file refuses to start, naming the file to copy', async () => {
    const wrong = join(dir, 'wrong.key');
    await writeFile(wrong, `${randomBytes(DATA_KEY_BYTES).toString('base64')}\n`, { mode: 0o600 });
    await expect(secondManager(wrong)).rejects.toMatchObject({
      code: 'MASTER_KEY_MISMATCH',
      message: expect.stringContaining(`copy the master key file`) as unknown,
    });
    await expect(secondManager(wrong)).rejects.toThrow(wrong);
  });

  it('a manager with no key file on a database in use refuses instead of making a key', async () => {
    const missing = join(dir, 'missing', 'master.key');
    await expect(secondManager(missing)).rejects.toThrow(
      new RegExp(`no master key file at ${missing}.*copy the master key file`),
    );
  });

  it('a key file others may read is refused', async () => {
    const loose = join(dir, 'loose.key');
    await writeFile(loose, await readFile(join(dir, 'first.key')));
    await chmod(loose, 0o644);
    await expect(secondManager(loose)).rejects.toThrow(/mode 644: others may read it; chmod 600/);
  });

  it("an older database's in-settings key moves out to the file, and is deleted there", async () => {
    // A database as migration 017 left it: the master key a settings row, every dataset key
    // wrapped with it, no check value (its own database: none of the keys above in it).
    const old = await startHarness({ masterKeyFile: join(dir, 'old.key') });
    try {
      const legacy = randomBytes(DATA_KEY_BYTES);
      await deleteSetting(old.app.pg, 'manager_master_key_check');
      await putSettingOnce(old.app.pg, 'manager_master_key', legacy.toString('base64'));
      const id = await dataset(old);
      const key = await newDataKey(old.app.pg, legacy, id);

      const moved = join(dir, 'moved', 'master.key');
      const upgraded = await secondManager(moved, old);
      try {
        expect((await upgraded.dataKeys.get(id))?.equals(key)).toBe(true);
        expect((await stat(moved)).mode & 0o777).toBe(0o600);
        expect((await readFile(moved, 'utf8')).trim()).toBe(legacy.toString('base64'));
        expect(await getSetting(old.app.pg, 'manager_master_key')).toBeUndefined();
        const dump = await dumpOfKeyTables(old);
        for (const s of spellings(legacy)) expect(dump).not.toContain(s);
      } finally {
        await upgraded.close();
      }
      // From now on a file with any other key is the wrong one, and the moved one still opens.
      await expect(secondManager(join(dir, 'old.key'), old)).rejects.toMatchObject({
        code: 'MASTER_KEY_MISMATCH',
      });
      const again = await secondManager(moved, old);
      expect((await again.dataKeys.get(id))?.equals(key)).toBe(true);
      await again.close();
    } finally {
      await old.close();
    }
  });
});
