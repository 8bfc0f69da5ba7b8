import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { startHarness, testConfig, type Harness } from '../test/harness.js';
import { TEST_MASTER_KEY_FILE } from '../test/master-key.js';
import { exportAndRecord, keyExported } from '../repositories/master-key-exports.js';
import {
  exportedMarkerPath,
  exportMasterKey,
  MASTER_KEY_FILE_MODE,
  readMasterKeyFile,
} from './master-key-file.js';

/**
 * The master key's backup (issue 17 leftovers): `freeloader manager key export` writes a 0600
 * copy a fresh manager on the same database accepts, never over an existing file, and the
 * managers warn at start (once, without the key) until the key has been exported — a fact kept
 * in the database by the key's check value, so every manager of the database and a restored
 * copy of the key know it. Real files and real PostgreSQL databases.
 */
let h: Harness;
let dir: string;
/** The manager's key file: a copy of the key the harness's database was set up with. */
let keyPath: string;

/** A copy of the tests' master key at `path`, mode 0600, not exported. */
const keyCopy = (path: string): Promise<void> => keyCopyOf(TEST_MASTER_KEY_FILE, path);

beforeAll(async () => {
  h = await startHarness();
  dir = await mkdtemp(join(tmpdir(), 'fl-key-export-'));
  keyPath = join(dir, 'master.key');
  await keyCopy(keyPath);
});
afterAll(async () => {
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('master key export', () => {
  it('writes a 0600 copy, records the key exported in the database, and never overwrites', async () => {
    const out = join(dir, 'backup.key');
    const recorded = await exportAndRecord({ keyPath, out, home: dir, databaseUrl: h.db.url });
    expect(recorded).toEqual({ recordedIn: 'database' });
    expect((await stat(out)).mode & 0o777).toBe(MASTER_KEY_FILE_MODE);
    expect(await readFile(out, 'utf8')).toBe(await readFile(keyPath, 'utf8'));
    const key = (await readMasterKeyFile(keyPath))!;
    expect(await keyExported(h.app.pg, key)).toBe(true);
    expect(existsSync(exportedMarkerPath(keyPath))).toBe(false);
    // The row says where and when, by the key's check value: never the key.
    const { rows } = await h.app.pg.query('SELECT * FROM master_key_exports');
    expect(JSON.stringify(rows)).toContain(out);
    expect(JSON.stringify(rows)).not.toContain(key.toString('base64'));

    const other = join(dir, 'taken.key');
    await writeFile(other, 'keep me\n');
    await expect(exportMasterKey(keyPath, other)).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
    });
    expect(await readFile(other, 'utf8')).toBe('keep me\n');
  });

  it('is refused without a key file', async () => {
    await expect(
      exportMasterKey(join(dir, 'none.key'), join(dir, 'never.key')),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('restores: a fresh manager on the same database starts on the export, not on another key', async () => {
    const out = join(dir, 'restore.key');
    await exportMasterKey(keyPath, out);
    const restored = await buildApp(testConfig(h.db.url, { masterKeyFile: out }), {
      timers: false,
    });
    await restored.close();

    const wrong = join(dir, 'wrong.key');
    await writeFile(wrong, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    await expect(
      buildApp(testConfig(h.db.url, { masterKeyFile: wrong }), { timers: false }),
    ).rejects.toMatchObject({ code: 'MASTER_KEY_MISMATCH' });
  });
});

/** Start a manager on `url` with the key file `masterKeyFile`; its lines saying "never backed up". */
async function warningsOf(url: string, masterKeyFile: string): Promise<string[]> {
  const lines: string[] = [];
  const app = await buildApp(testConfig(url, { masterKeyFile, logLevel: 'warn' }), {
    timers: false,
    logStream: { write: (l) => void lines.push(l) },
  });
  await app.close();
  const key = (await readFile(masterKeyFile, 'utf8')).trim();
  expect(lines.join('')).not.toContain(key);
  return lines.filter((l) => l.includes('never been backed up'));
}

/** A new random key in `name` under `dir` (mode 0600), and `copies` more copies of it. */
async function newKey(name: string, ...copies: string[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `${randomBytes(32).toString('base64')}\n`, { mode: MASTER_KEY_FILE_MODE });
  for (const c of copies) await keyCopyOf(path, join(dir, c));
  return path;
}
async function keyCopyOf(from: string, to: string): Promise<void> {
  await copyFile(from, to);
  await chmod(to, MASTER_KEY_FILE_MODE);
}

describe('the exported mark is a fact of the key, kept in the database', () => {
  it('two managers on one database: export via one, the other stops warning; a different key warns', async () => {
    // Manager 1 (the harness's app) and manager 2 each have their own copy of one new key.
    const m1 = await newKey('m1.key', 'm2.key');
    const m2 = join(dir, 'm2.key');
    const h2 = await startHarness({ masterKeyFile: m1 });
    try {
      const before = await warningsOf(h2.db.url, m2);
      expect(before).toHaveLength(1);
      expect(before.join('')).toContain('"level":40');

      const backup = join(dir, 'm1-backup.key');
      const recorded = await exportAndRecord({
        keyPath: m1,
        out: backup,
        home: dir,
        databaseUrl: h2.db.url,
      });
      expect(recorded).toEqual({ recordedIn: 'database' });
      // Manager 2 restarts: its own copy was never exported, the key was.
      expect(await warningsOf(h2.db.url, m2)).toEqual([]);
      // A key file restored from the backup is the same key: no warning either.
      expect(await warningsOf(h2.db.url, backup)).toEqual([]);
    } finally {
      await h2.close();
    }

    // Another database with another key: the first key's export recorded there too (by its
    // check value) does not count for this one.
    const other = await newKey('other.key');
    const h3 = await startHarness({ masterKeyFile: other });
    try {
      await exportAndRecord({
        keyPath: m1,
        out: join(dir, 'm1-again.key'),
        home: dir,
        databaseUrl: h3.db.url,
      });
      expect(await warningsOf(h3.db.url, other)).toHaveLength(1);
    } finally {
      await h3.close();
    }
  });

  it('an export that finds no database is noted beside the key and moved into the database at the next start', async () => {
    const key = await newKey('offline.key');
    const copy = join(dir, 'offline-copy.key');
    await keyCopyOf(key, copy);
    const h4 = await startHarness({ masterKeyFile: key });
    try {
      // Port 1: nothing listens, the connection is refused at once.
      const recorded = await exportAndRecord({
        keyPath: key,
        out: join(dir, 'offline-backup.key'),
        home: dir,
        databaseUrl: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(recorded).toMatchObject({ recordedIn: 'file' });
      const marker = await readFile(exportedMarkerPath(key), 'utf8');
      expect(marker).toContain('offline-backup.key');
      expect(marker).not.toContain((await readFile(key, 'utf8')).trim());

      // The key's own manager restarts: the note moves into the database, the file goes.
      expect(await warningsOf(h4.db.url, key)).toEqual([]);
      expect(existsSync(exportedMarkerPath(key))).toBe(false);
      // Every other copy of the key on that database knows it now.
      expect(await warningsOf(h4.db.url, copy)).toEqual([]);
    } finally {
      await h4.close();
    }
  });
});
