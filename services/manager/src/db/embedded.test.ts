import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../testing/free-port.js';
import { startEmbeddedPostgres } from './embedded.js';

const run = promisify(execFile);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fl-embedded-'));
  await chmod(dir, 0o711);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ n: number }>('SELECT 1 AS n')).rows[0]!.n;
  } finally {
    await client.end();
  }
}

describe('startEmbeddedPostgres', () => {
  it('refuses a non-empty directory that holds no cluster', async () => {
    const dataDir = join(dir, 'junk', 'pgdata');
    await mkdir(dataDir, { recursive: true });
    await writeFile(join(dataDir, 'stray.txt'), 'x');
    await expect(startEmbeddedPostgres({ dataDir, port: 1, ownedRoot: dir })).rejects.toThrow(
      /not empty but holds no PostgreSQL cluster/,
    );
  });

  it.skipIf(process.getuid?.() !== 0)(
    'as root, moves data an older version relocated (home/manager/pgdata a link) back home',
    async () => {
      const home = join(dir, 'legacy-home');
      const dataDir = join(home, 'manager', 'pgdata');
      const relocated = join(dir, 'var-lib-freeloader', 'pgdata-0123456789abcdef');
      const port = await freePort();
      // Made the way older versions did: the cluster elsewhere, a link in the home.
      const made = await startEmbeddedPostgres({ dataDir: relocated, port, ownedRoot: dir });
      await made.stop();
      await mkdir(dirname(dataDir), { recursive: true });
      await rename(join(dirname(relocated), 'pg-password'), join(home, 'manager', 'pg-password'));
      await symlink(relocated, dataDir);

      const moved = await startEmbeddedPostgres({ dataDir, port, ownedRoot: home });
      try {
        expect(moved.initialised).toBe(false);
        expect((await lstat(dataDir)).isDirectory()).toBe(true);
        expect(existsSync(relocated)).toBe(false);
        expect(await selectOne(moved.url)).toBe(1);
      } finally {
        await moved.stop();
      }
    },
  );

  it.skipIf(process.getuid?.() !== 0)(
    'as root, keeps the data under the home when a directory above it is closed to others',
    async () => {
      // home sits inside a directory closed to others, like /root/.freeloader.
      const closed = join(dir, 'closed');
      await mkdir(closed, { mode: 0o700 });
      await chmod(closed, 0o700);
      const home = join(closed, 'home');
      const dataDir = join(home, 'manager', 'pgdata');
      const port = await freePort();

      const first = await startEmbeddedPostgres({ dataDir, port, ownedRoot: home });
      try {
        expect(first.initialised).toBe(true);
        // The data is a real directory in the home, not a link to somewhere else.
        expect((await lstat(dataDir)).isDirectory()).toBe(true);
        expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
        // Only the postgres user was let through the closed directory; others still are not.
        expect((await stat(closed)).mode & 0o007).toBe(0);
        const { stdout } = await run('getfacl', ['-p', closed]);
        expect(stdout).toMatch(/^user:postgres:--x$/m);
        expect(await selectOne(first.url)).toBe(1);
      } finally {
        await first.stop();
      }
      const second = await startEmbeddedPostgres({ dataDir, port, ownedRoot: home });
      try {
        expect(second.initialised).toBe(false);
        expect(await selectOne(second.url)).toBe(1);
      } finally {
        await second.stop();
      }
    },
  );
});
