import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshHome, removeHomes } from '../test/fresh-home.js';
import { exited, freePort, isRunning, runCli, spawnCli, waitFor } from '../test/processes.js';

/**
 * `freeloader manager key export` (issue 17 leftovers): the export is recorded in the database
 * of the manager, so the manager stops warning at its next start — here a real `freeloader
 * manager` on its embedded PostgreSQL, found by the CLI through `--home` — and noted beside the
 * key when no database answers. The two-managers-on-one-database case is the manager's own
 * test (services/manager/src/db/master-key-export.test.ts).
 */
afterAll(removeHomes);

const NEVER_BACKED_UP = 'never been backed up';

/** Start `freeloader manager` on `home` until it is up; its output so far goes with it. */
async function startManager(home: string, pgPort: number) {
  const child: ChildProcess = spawnCli(
    ['manager', '--listen', '127.0.0.1:0', '--home', home],
    { LOG_LEVEL: 'warn', EMBEDDED_PG_PORT: String(pgPort) },
    { detached: true },
  );
  const out = { text: '' };
  child.stderr!.on('data', (b: Buffer) => (out.text += b.toString()));
  child.stdout!.on('data', (b: Buffer) => (out.text += b.toString()));
  await waitFor(
    'the manager to be up',
    () => {
      if (!isRunning(child)) throw new Error(`manager exited:\n${out.text}`);
      return /^manager: http/m.test(out.text) ? true : undefined;
    },
    120_000,
    100,
  );
  return {
    out,
    stop: async () => {
      child.kill('SIGTERM');
      expect(await exited(child), out.text).toBe(0);
    },
  };
}

describe('freeloader manager key export', { timeout: 300_000 }, () => {
  it('records the export in the running manager’s database: its next start does not warn', async () => {
    const home = await freshHome('fl-key-export-cli-');
    const pgPort = await freePort();
    const first = await startManager(home, pgPort);
    expect(first.out.text).toContain(NEVER_BACKED_UP);

    const out = join(home, 'backup.key');
    const res = await runCli(['manager', '--home', home, 'key', 'export', '--out', out]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('export recorded in the database');
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    expect(await readFile(out, 'utf8')).toBe(
      await readFile(join(home, 'manager', 'master.key'), 'utf8'),
    );
    expect(existsSync(join(home, 'manager', 'master.key.exported'))).toBe(false);
    await first.stop();

    const second = await startManager(home, pgPort);
    expect(second.out.text).not.toContain(NEVER_BACKED_UP);
    await second.stop();
  });

  it('with no database to reach, notes the export beside the key and says so', async () => {
    const home = await freshHome('fl-key-export-cli-');
    const key = join(home, 'master.key');
    await writeFile(key, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const out = join(home, 'offline-backup.key');
    const res = await runCli(
      ['manager', '--home', home, '--master-key-file', key, 'key', 'export', '--out', out],
      { DATABASE_URL: '' },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('export noted beside the key');
    expect(await readFile(`${key}.exported`, 'utf8')).toContain(out);
    // Never over an existing file.
    const again = await runCli([
      'manager',
      '--master-key-file',
      key,
      'key',
      'export',
      '--out',
      out,
    ]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('exists');
  });
});
