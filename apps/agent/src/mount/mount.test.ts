import { createHash } from 'node:crypto';
import { mkdir, open, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB, type DatasetView } from '@freeloader/protocol';
import {
  startTestServer,
  type TestServer,
  type TestServerOptions,
} from '@freeloader/sources/testing';
import { KERNEL_READ_AHEAD_KB } from './kernel-read-ahead.js';
import { mountAt } from './mount-point.js';
import { startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { killSpawned } from '../test/processes.js';
import {
  HAS_FUSE,
  loginToken,
  mountRoot,
  nodeScript,
  sh,
  spawnMount,
  type MountProcess,
} from './test-mounts.js';

// Real mounts: a manager, three agent processes, `freeloader mount` as its own process, and
// ordinary tools (ls, stat, md5sum, dd, a pread loop in another process) reading through the
// kernel. Every byte is compared with the source's.
const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex');
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

let c: DataCluster;
let mnt: MountProcess;
let root: Awaited<ReturnType<typeof mountRoot>>;
const servers: TestServer[] = [];
const data: Record<string, { src: TestServer; view: DatasetView }> = {};

async function dataset(
  name: string,
  size: number,
  seed: number,
  server: TestServerOptions = {},
): Promise<void> {
  const src = await startTestServer({ size, seed, ...server });
  servers.push(src);
  const view = await c.importAndWait({ uri: src.url, name });
  expect(view.state).toBe('ready');
  data[name] = { src, view };
}

describe.skipIf(!HAS_FUSE)(
  'a mounted namespace (skipped: no /dev/fuse here)',
  { timeout: 180_000 },
  () => {
    beforeAll(async () => {
      c = await startDataCluster(3, '96MiB');
      root = await mountRoot();
      await dataset('mnt/seq.bin', 24 * MiB + 4321, 21);
      await dataset('mnt/deep/dd.bin', 9 * MiB + 77, 22);
      await dataset('mnt/deep/random.bin', 12 * MiB + 5, 23);
      // A source without Last-Modified: its file shows the import time instead.
      await dataset('top.bin', 3 * MiB, 24, { lastModified: false });
      await dataset('mnt/two.bin', 8 * MiB + 1, 25);
      // With the kernel read-ahead raised (the default keeps the kernel's): checked below.
      mnt = await spawnMount(c.tm, await loginToken(c.tm), join(root.root, 'a'), [
        '--kernel-readahead-kb',
        String(KERNEL_READ_AHEAD_KB),
      ]);
    }, 180_000);

    afterAll(async () => {
      await mnt?.stop('SIGTERM');
      await killSpawned();
      await root?.cleanup();
      await Promise.all(servers.map((s) => s.close()));
      await c?.close();
    }, 120_000);

    const at = (path: string): string => join(mnt.dir, path);

    it('lists folders and datasets with `ls -R`', async () => {
      const ls = await sh(`cd '${mnt.dir}' && ls -R`);
      expect(ls.code).toBe(0);
      expect(ls.stdout).toContain('.:\nmnt\ntop.bin\n');
      expect(ls.stdout).toContain('./mnt:\ndeep\nseq.bin\ntwo.bin\n');
      expect(ls.stdout).toContain('./mnt/deep:\ndd.bin\nrandom.bin\n');
    });

    it.each([
      ['mnt/seq.bin', 24 * MiB + 4321, 'source'],
      ['mnt/deep/dd.bin', 9 * MiB + 77, 'source'],
      ['top.bin', 3 * MiB, 'import'],
    ])('`stat %s` shows size %i, the %s time and a read-only file', async (name, size) => {
      const st = await sh(`stat -c '%s %Y %a %F' '${at(name)}'`);
      const view = data[name]!.view;
      // The test server dates its content 2024-01-01T00:01:00Z; top.bin's sends no date.
      const mtime =
        name === 'top.bin'
          ? Math.floor(Date.parse(view.createdAt) / 1000)
          : Date.UTC(2024, 0, 1, 0, 1) / 1000;
      expect(view.lastModified === null).toBe(name === 'top.bin');
      expect(st.stdout.trim()).toBe(`${size} ${mtime} 444 regular file`);
      const dir = await stat(at('mnt/deep'));
      expect(dir.isDirectory()).toBe(true);
    });

    it('answers ENOENT for names that do not exist', async () => {
      await expect(stat(at('mnt/nope.bin'))).rejects.toMatchObject({ code: 'ENOENT' });
      await expect(stat(at('nope/deeper'))).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('`md5sum` of a mounted dataset equals the source', async () => {
      const out = await sh(`md5sum '${at('mnt/seq.bin')}'`);
      expect(out.stdout.split(' ')[0]).toBe(md5(data['mnt/seq.bin']!.src.content));
    });

    it.each([
      ['4k', 4096, 0, 300],
      ['64k from 1 MiB - 64 KiB', 65536, 15, 40],
      ['1M', MiB, 0, 10],
      ['3M from 3 MiB (the tail)', 3 * MiB, 1, 3],
      ['1000 bytes (odd size)', 1000, 7000, 50],
    ])('`dd bs=%s` reads the right bytes', async (_n, bs, skip, count) => {
      const src = data['mnt/deep/dd.bin']!.src.content;
      const out = await sh(
        `dd if='${at('mnt/deep/dd.bin')}' bs=${bs} skip=${skip} count=${count} iflag=nocache status=none | sha256sum`,
      );
      expect(out.stdout.split(' ')[0]).toBe(sha(src.subarray(skip * bs, (skip + count) * bs)));
    });

    it('serves random preads at many offsets from another process', async () => {
      const src = data['mnt/deep/random.bin']!.src.content;
      let x = 12345;
      const rand = (n: number): number => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % n);
      const reads = Array.from({ length: 200 }, (_, i) => {
        const len = 1 + rand(i % 5 === 0 ? 3 * MiB : 70_000);
        // Some straddle morsel boundaries, some run past the end.
        const pos = i % 7 === 0 ? (1 + rand(12)) * MiB - rand(500) : rand(src.length + 1000);
        return [pos, len] as const;
      });
      const script = `
      const fs = require('fs'), crypto = require('crypto');
      const fd = fs.openSync(process.argv[1], 'r');
      const out = JSON.parse(process.argv[2]).map(([pos, len]) => {
        const b = Buffer.alloc(len); const n = fs.readSync(fd, b, 0, len, pos);
        return crypto.createHash('sha256').update(b.subarray(0, n)).digest('hex');
      });
      console.log(JSON.stringify(out));`;
      const res = await nodeScript(script, [at('mnt/deep/random.bin'), JSON.stringify(reads)]);
      expect(res.stderr).toBe('');
      const got = JSON.parse(res.stdout) as string[];
      expect(got).toEqual(reads.map(([pos, len]) => sha(src.subarray(pos, pos + len))));
    });

    it('serves memory-mapped reads (how BLAST and numpy.memmap read)', async () => {
      const src = data['mnt/seq.bin']!.src.content;
      const py = await sh(
        `python3 -c "import mmap,hashlib,sys; f=open(sys.argv[1],'rb'); m=mmap.mmap(f.fileno(),0,access=mmap.ACCESS_READ); print(len(m), hashlib.sha256(m[5000000:9000000]).hexdigest())" '${at('mnt/seq.bin')}'`,
      );
      expect(py.stderr).toBe('');
      expect(py.stdout.trim()).toBe(`${src.length} ${sha(src.subarray(5_000_000, 9_000_000))}`);
    });

    it('serves two concurrent readers of files not read before', async () => {
      const [a, b] = await Promise.all([
        sh(`md5sum '${at('top.bin')}'`),
        sh(`cat '${at('mnt/two.bin')}' | md5sum`),
      ]);
      expect(a.stdout.split(' ')[0]).toBe(md5(data['top.bin']!.src.content));
      expect(b.stdout.split(' ')[0]).toBe(md5(data['mnt/two.bin']!.src.content));
    });

    it.each([
      ['overwrite', `echo x > '{f}'`],
      ['append', `echo x >> '{f}'`],
      ['create', `touch '{d}/new.bin'`],
      ['mkdir', `mkdir '{d}/newdir'`],
      ['remove', `rm -f '{f}'`],
      ['rename', `mv '{f}' '{d}/moved.bin'`],
      ['truncate', `truncate -s 0 '{f}'`],
    ])('refuses a write attempt (%s) as a read-only file system', async (_n, cmd) => {
      const res = await sh(cmd.replaceAll('{f}', at('top.bin')).replaceAll('{d}', at('mnt')));
      expect(res.code).not.toBe(0);
      expect(res.stderr).toMatch(/Read-only file system|Permission denied/);
      expect((await stat(at('top.bin'))).size).toBe(3 * MiB);
    });

    it('refuses writes from the API too (EROFS), directly', async () => {
      await expect(open(at('top.bin'), 'r+')).rejects.toMatchObject({ code: 'EROFS' });
      await expect(writeFile(at('mnt/x.bin'), 'x')).rejects.toMatchObject({ code: 'EROFS' });
      await expect(mkdir(at('mnt/d'))).rejects.toMatchObject({ code: 'EROFS' });
    });

    it.skipIf(process.getuid?.() !== 0)(
      'raises the kernel read-ahead of the mount when asked (root may)',
      async () => {
        const file = `/sys/class/bdi/${(await mountAt(mnt.dir))!.device}/read_ahead_kb`;
        expect(Number((await readFile(file, 'utf8')).trim())).toBe(KERNEL_READ_AHEAD_KB);
      },
    );

    it('reports itself as a read-only freeloader file system to statfs', async () => {
      const df = await sh(`df -P '${mnt.dir}' && findmnt -no FSTYPE,OPTIONS '${mnt.dir}'`);
      expect(df.stdout).toMatch(/^freeloader /m);
      expect(df.stdout).toMatch(/fuse\.freeloader\s+ro,/);
    });
  },
);
