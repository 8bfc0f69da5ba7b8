import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { fetchMap } from '../client/fetch-map.js';
import { startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { killSpawned, runCli, waitFor } from '../test/processes.js';
import { mountAt, probeDir } from './mount-point.js';
import { HAS_FUSE, loginToken, mountRoot, sh, spawnMount } from './test-mounts.js';

// Mounts coming and going under load: unmount and SIGTERM in the middle of a read, a mount
// point left stale by a crash, and a donor killed while a file is being read.
const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex');
const SIZE = 32 * MiB + 999;
const NAME = 'life/big.bin';

let c: DataCluster;
let src: TestServer;
let token: string;
let root: Awaited<ReturnType<typeof mountRoot>>;

/**
 * A reader in its own process: 1 MiB reads with a pause after each. Once 4 MiB are in it prints
 * `started` and holds the file open until released (a line on its stdin), so what the test does
 * next happens during the read however slow a busy machine is; then `md5 <hex>` at the end or
 * `error <code>` when a read fails.
 */
function slowReader(
  file: string,
  pauseMs: number,
): { lines: string[]; done: Promise<string>; release: () => void } {
  const script = `
    const fs = require('fs'), crypto = require('crypto');
    const fd = fs.openSync(process.argv[1], 'r'), h = crypto.createHash('md5');
    const b = Buffer.alloc(1 << 20); let pos = 0;
    const step = () => {
      let n;
      try { n = fs.readSync(fd, b, 0, b.length, pos); } catch (e) { console.log('error ' + e.code); return; }
      if (n === 0) { console.log('md5 ' + h.digest('hex')); return; }
      h.update(b.subarray(0, n)); pos += n;
      if (pos === 4 << 20) { console.log('started'); process.stdin.once('data', () => { process.stdin.destroy(); step(); }); return; }
      setTimeout(step, ${pauseMs});
    };
    step();`;
  const child = spawn(process.execPath, ['-e', script, file], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  child.stdout.on('data', (d: Buffer) => lines.push(...d.toString().trim().split('\n')));
  // Only against a hang: a busy machine reads 32 MiB through FUSE in well under this.
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  const done = new Promise<string>((resolve) =>
    child.once('close', () => {
      clearTimeout(timer);
      resolve(lines.at(-1) ?? 'killed');
    }),
  );
  return { lines, done, release: () => child.stdin.end('go\n') };
}

/** The agent a reader of NAME asks first: the highest predicted rate in its map (else any). */
async function preferredDonor(): Promise<DataCluster['agents'][number]> {
  const map = await fetchMap(c.tm.admin, NAME);
  const rate = (id: string): number => map.donors.find((d) => d.id === id)?.rate ?? 0;
  return [...c.agents].sort((a, b) => rate(b.agentId) - rate(a.agentId))[0]!;
}

const started = (r: { lines: string[] }): Promise<true> =>
  waitFor('the reader to start', () => (r.lines.includes('started') ? true : undefined), 60_000);

describe.skipIf(!HAS_FUSE)(
  'mounts coming and going (skipped: no /dev/fuse here)',
  { timeout: 180_000 },
  () => {
    beforeAll(async () => {
      c = await startDataCluster(3, '96MiB');
      root = await mountRoot();
      src = await startTestServer({ size: SIZE, seed: 31 });
      expect((await c.importAndWait({ uri: src.url, name: NAME })).state).toBe('ready');
      token = await loginToken(c.tm);
    }, 180_000);

    afterAll(async () => {
      await killSpawned();
      await root?.cleanup();
      await src?.close();
      await c?.close();
    }, 120_000);

    it('`freeloader unmount` during a read detaches; the reader finishes and the mount exits 0', async () => {
      const m = await spawnMount(c.tm, token, join(root.root, 'a'));
      const reader = slowReader(join(m.dir, NAME), 40);
      await started(reader);
      const un = await runCli(['unmount', m.dir]);
      expect(un.code).toBe(0);
      expect(un.stderr).toMatch(/detached/);
      reader.release();
      expect(await reader.done).toBe(`md5 ${md5(src.content)}`);
      expect(await m.exited()).toBe(0); // by itself, once the last file closed
      expect(m.stderr()).toMatch(/^unmounted /m);
      expect(await mountAt(m.dir)).toBeUndefined();
    });

    it('SIGTERM during a read unmounts cleanly after the drain time, never hanging the reader', async () => {
      const m = await spawnMount(c.tm, token, join(root.root, 'b'), ['--drain', '0.5']);
      const reader = slowReader(join(m.dir, NAME), 100);
      await started(reader);
      expect(await m.stop('SIGTERM')).toBe(0);
      reader.release();
      // Cut off after the drain: the reader gets an error, not a hang.
      expect(await reader.done).toMatch(/^(error (ENOTCONN|EIO|ECONNABORTED)|md5 [0-9a-f]{32})$/);
      expect(await mountAt(m.dir)).toBeUndefined();
    });

    it('restarts over a stale mount point left by a crash', async () => {
      const dir = join(root.root, 'c');
      const first = await spawnMount(c.tm, token, dir);
      await first.stop('SIGKILL');
      expect(await probeDir(dir)).toBe('stale');
      const second = await spawnMount(c.tm, token, dir);
      expect(second.stderr()).toMatch(/cleared a stale mount/);
      const sum = await sh(`md5sum '${join(dir, NAME)}'`);
      expect(sum.stdout.split(' ')[0]).toBe(md5(src.content));
      const un = await runCli(['unmount', dir]);
      expect(un.stderr).toMatch(/^unmounted /m);
      expect(await second.exited()).toBe(0);
    });

    it('keeps the bytes right when a donor is killed during a read', async () => {
      const m = await spawnMount(c.tm, token, join(root.root, 'a'));
      const reader = slowReader(join(m.dir, NAME), 30);
      await started(reader);
      // With two copies the read only asks a copy's donor when it ranks first (equally healthy
      // copies go fastest-predicted first), so a slower donor could die unnoticed: kill the one
      // the read prefers, which serves every morsel it holds.
      const victim = await preferredDonor();
      await victim.stop('SIGKILL');
      reader.release();
      expect(await reader.done).toBe(`md5 ${md5(src.content)}`);
      // The user is told which donor failed and that the read went on elsewhere.
      expect(m.stderr()).toContain(`donor ${victim.agentId}: `);
      expect(m.stderr()).toMatch(/donor .* \(reading elsewhere\)/);
      expect(await m.stop('SIGTERM')).toBe(0);
    });
  },
);
