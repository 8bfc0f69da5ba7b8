import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { startHarness, testConfig, type Harness } from '../test/harness.js';
import { TEST_MASTER_KEY_FILE } from '../test/master-key.js';
import { exportedMarkerPath, exportMasterKey, MASTER_KEY_FILE_MODE } from './master-key-file.js';

/**
 * The master key's backup (issue 17 leftovers): `freeloader manager key export` writes a 0600
 * copy a fresh manager on the same database accepts, never over an existing file, and the
 * manager warns at start (once, without the key) until the key has been exported. Real files
 * and a real PostgreSQL database.
 */
let h: Harness;
let dir: string;
/** The manager's key file: a copy of the key the harness's database was set up with. */
let keyPath: string;

/** A copy of the tests' master key at `path`, mode 0600, not exported. */
async function keyCopy(path: string): Promise<void> {
  await copyFile(TEST_MASTER_KEY_FILE, path);
  await chmod(path, MASTER_KEY_FILE_MODE);
}

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
  it('writes a 0600 copy, marks the key exported, and never overwrites', async () => {
    const out = join(dir, 'backup.key');
    await exportMasterKey(keyPath, out);
    expect((await stat(out)).mode & 0o777).toBe(MASTER_KEY_FILE_MODE);
    expect(await readFile(out, 'utf8')).toBe(await readFile(keyPath, 'utf8'));
    // The marker says where and when, never the key.
    const marker = await readFile(exportedMarkerPath(keyPath), 'utf8');
    expect(marker).toContain(out);
    expect(marker).not.toContain((await readFile(keyPath, 'utf8')).trim());

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

  it('warns once at start until the key is exported, without the key in the log', async () => {
    const logsOf = async (masterKeyFile: string) => {
      const lines: string[] = [];
      const app = await buildApp(testConfig(h.db.url, { masterKeyFile, logLevel: 'warn' }), {
        timers: false,
        logStream: { write: (l) => void lines.push(l) },
      });
      await app.close();
      return lines;
    };
    const fresh = join(dir, 'fresh.key');
    await keyCopy(fresh);
    const key = (await readFile(fresh, 'utf8')).trim();
    const before = await logsOf(fresh);
    expect(before.filter((l) => l.includes('never been backed up'))).toHaveLength(1);
    expect(before.join('')).toContain('"level":40');
    expect(before.join('')).not.toContain(key);

    await exportMasterKey(fresh, join(dir, 'fresh-backup.key'));
    const after = await logsOf(fresh);
    expect(after.filter((l) => l.includes('never been backed up'))).toEqual([]);
    expect(after.join('')).not.toContain(key);
  });
});
