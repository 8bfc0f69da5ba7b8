import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { CLI_MAIN, killSpawned, waitFor } from '../test/processes.js';
import { mountAt } from './mount-point.js';
import { HAS_FUSE, loginToken, mountRoot, spawnMount } from './test-mounts.js';

const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex');

/** A shell script run like a user's, with the CLI as `fl` and a session token in the env. */
function script(
  text: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const fl = `"${process.execPath}" "${CLI_MAIN}"`;
  return new Promise((resolve) => {
    execFile(
      'sh',
      ['-c', `fl() { ${fl} "$@"; }\n${text}`],
      { env: { ...process.env, ...env }, timeout: 150_000, killSignal: 'SIGKILL' },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** `freeloader mount` returns (or says "mounted") only once the files are visible. */
describe.skipIf(!HAS_FUSE)(
  'mount readiness (skipped: no /dev/fuse here)',
  { timeout: 180_000 },
  () => {
    let c: DataCluster;
    let src: TestServer;
    let root: Awaited<ReturnType<typeof mountRoot>>;
    let env: NodeJS.ProcessEnv;

    beforeAll(async () => {
      c = await startDataCluster(2, '32MiB');
      root = await mountRoot();
      src = await startTestServer({ size: 2 * MiB + 3, seed: 41 });
      expect((await c.importAndWait({ uri: src.url, name: 'r/x.bin' })).state).toBe('ready');
      env = { FREELOADER_TOKEN: await loginToken(c.tm), FREELOADER_MANAGER: c.tm.url };
    }, 180_000);

    afterAll(async () => {
      for (const dir of ['a', 'b']) await script(`fl unmount '${join(root.root, dir)}'`, env);
      await killSpawned();
      await root?.cleanup();
      await src?.close();
      await c?.close();
    }, 60_000);

    it('`mount --daemon DIR && ls DIR && md5sum DIR/file` works at once', async () => {
      const dir = join(root.root, 'a');
      const res = await script(
        `fl mount --daemon '${dir}' && ls '${dir}/r' && md5sum '${dir}/r/x.bin'`,
        env,
      );
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toBe(`x.bin\n${md5(src.content)}  ${dir}/r/x.bin\n`);
      expect(res.stderr).toMatch(/^mounted .* \(in the background, pid \d+\)$/m);
      // It runs on after the parent exited; unmounting ends it.
      const pid = Number(/pid (\d+)\)/.exec(res.stderr)![1]);
      expect((await script(`fl unmount '${dir}'`, env)).code).toBe(0);
      await waitFor(
        'the background mount to exit',
        () => {
          try {
            process.kill(pid, 0);
            return undefined;
          } catch {
            return true;
          }
        },
        30_000,
      );
      expect(await mountAt(dir)).toBeUndefined();
    });

    it('`mount --daemon` on a file exits non-zero with the error', async () => {
      const file = join(root.root, 'not-a-dir');
      await writeFile(file, 'x');
      const res = await script(`fl mount --daemon '${file}'`, env);
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toMatch(/^error: .*not-a-dir/);
    });

    it('in the foreground, the files are visible the moment it says "mounted"', async () => {
      const m = await spawnMount(c.tm, env.FREELOADER_TOKEN!, join(root.root, 'b'));
      // No waiting: a script reading right after the line must not get ENOENT.
      const res = await script(`stat -f -c %T '${m.dir}' && ls '${m.dir}/r'`, {});
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toBe('fuseblk\nx.bin\n');
      expect(await m.stop('SIGTERM')).toBe(0);
    });
  },
);
