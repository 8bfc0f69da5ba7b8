// Reading through `freeloader mount` on loopback from 4 donors (no shaping): `dd bs=1M` and
// `md5sum` of a 1 GiB dataset through the kernel, next to `freeloader get` of the same dataset
// and `md5sum` of the source file in the page cache (md5sum's own ceiling on this CPU). Every
// sample is a fresh mount, so neither the kernel's page cache nor the mount's morsel cache
// holds the file. The md5 read through the mount must equal the source's.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FREELOADER_CLI, freeloaderEnv } from '../lib/freeloader.js';
import { startLoopbackCluster } from '../lib/loopback-cluster.js';
import { startNginx } from '../lib/nginx.js';
import { LOOPBACK } from '../lib/processes.js';
import { run } from '../lib/sh.js';
import { median, repeat } from '../lib/stats.js';

/** Target from the mount issue: ≥ 1 GB/s through the mount on loopback with 4 donors. */
const TARGET_MBPS = 1000;
const SUMMARY = /in ([\d.]+) s, ([\d.]+) MB\/s/;
const NAME = 'bench/mount.bin';

/**
 * `freeloader mount <dir>` until `stop()`; resolves once it says it is mounted.
 *
 * @param {string} url
 * @param {string} home
 * @param {string} dir
 * @param {string[]} [extra] more `mount` options
 */
async function mount(url, home, dir, extra = []) {
  const child = spawn('node', [FREELOADER_CLI, 'mount', dir, '--manager', url, ...extra], {
    env: freeloaderEnv(home),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (b) => (err += b));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not mounted in 30 s:\n${err}`)), 30_000);
    child.stderr.on('data', () => {
      if (/^mounted /m.test(err)) {
        clearTimeout(timer);
        resolve(undefined);
      }
    });
    exited.then((code) => reject(new Error(`mount exited (${code}):\n${err}`)));
  });
  return {
    stop: async () => {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`mount exited ${code}:\n${err}`);
    },
  };
}

/**
 * Time a shell pipeline over the file (wall clock, as a user sees it); returns MB/s and stdout.
 *
 * @param {string} command
 * @param {number} bytes
 */
async function timed(command, bytes) {
  const t0 = performance.now();
  const { stdout } = await run('bash', ['-c', command], { timeoutMs: 600_000 });
  const seconds = (performance.now() - t0) / 1000;
  return { mbps: bytes / 1e6 / seconds, stdout };
}

/** @returns {Promise<number>} a TCP port free on 127.0.0.1 now (other benchmarks run too) */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

export default {
  name: 'mount-loopback',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const bytes = (ctx.quick ? 256 : 1024) * 2 ** 20;
    const reps = ctx.quick ? 1 : 3;
    const work = ctx.workDir('mount-loopback');
    const home = join(work, 'home');
    const dir = join(work, 'mnt');
    await mkdir(home, { recursive: true });
    await mkdir(dir);
    await chmod(work, 0o711);
    await chmod(home, 0o711);
    const ds = await ctx.dataset(bytes);
    const file = join(dir, NAME);
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];

    // md5sum's own speed on this CPU, from the page cache: the ceiling for the md5sum row.
    await run('bash', ['-c', `cat '${ds.path}' > /dev/null`], { timeoutMs: 600_000 });
    const local = await timed(`md5sum '${ds.path}'`, bytes);
    const sourceMd5 = local.stdout.split(' ')[0];

    const web = await startNginx(LOOPBACK, {
      root: ds.dir,
      workDir: join(work, 'nginx'),
      port: await freePort(),
    });
    // Its own embedded PostgreSQL port: a developer's cluster may hold the default one.
    const pgPort = process.env.EMBEDDED_PG_PORT;
    process.env.EMBEDDED_PG_PORT = String(await freePort());
    /** @type {import('../lib/loopback-cluster.js').LoopbackCluster | undefined} */
    let cluster;
    try {
      cluster = await startLoopbackCluster({
        home,
        agents: 4,
        quota: '2GiB',
        port: await freePort(),
        agentBasePort: await freePort(),
      }).finally(() => {
        if (pgPort === undefined) delete process.env.EMBEDDED_PG_PORT;
        else process.env.EMBEDDED_PG_PORT = pgPort;
      });
      const url = cluster.url;
      const cli = cluster.cli;
      await cli(['import', web.url(ds.name), '--name', NAME, '--width', '4', '--wait'], 600_000);
      // The comparison row; a failing `get` must not hide the mount's numbers.
      const get = await repeat(reps, async () => {
        const got = await cli(['get', NAME, '-o', '/dev/null'], 600_000);
        const m = SUMMARY.exec(got.stderr);
        if (!m) throw new Error(`no summary from get: ${got.stderr}`);
        return Number(m[2]);
      }).catch((e) => {
        ctx.log(`freeloader get failed, no comparison row: ${e instanceof Error ? e.message : e}`);
        return undefined;
      });
      const ddCheck = (/** @type {string} */ out) => {
        if (out.trim() !== `${bytes} bytes`) throw new Error(`dd read ${out.trim()}`);
      };
      const dd = `dd if='${file}' of=/dev/null bs=1M 2>&1 | grep -o '^[0-9]* bytes'`;
      // A fresh mount per sample; its cache holds the whole file, so after dropping the kernel's
      // page cache a second dd measures the kernel ⇄ mount path alone, from the mount's memory.
      /** @type {number[]} */
      const fromMemory = [];
      const cacheMb = String(Math.ceil((bytes * 1.25) / 2 ** 20));
      const ddNet = await repeat(reps, async () => {
        const m = await mount(url, home, dir, ['--cache-mb', cacheMb]);
        try {
          const r = await timed(dd, bytes);
          ddCheck(r.stdout);
          await run('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
          const again = await timed(dd, bytes);
          ddCheck(again.stdout);
          fromMemory.push(again.mbps);
          return r.mbps;
        } finally {
          await m.stop();
        }
      });
      const md5 = await repeat(reps, async () => {
        const m = await mount(url, home, dir);
        try {
          const r = await timed(`md5sum '${file}'`, bytes);
          if (r.stdout.split(' ')[0] !== sourceMd5)
            throw new Error('md5 through the mount differs');
          return r.mbps;
        } finally {
          await m.stop();
        }
      });
      const mib = `${bytes / 2 ** 20} MiB`;
      rows.push(
        {
          case: `dd bs=1M through the mount, 4 donors, ${mib}`,
          params: { bytes, samples: ddNet.samples },
          mbps: ddNet.median,
          limitMbps: TARGET_MBPS,
          targetRatio: 1,
          note: 'fresh mount per sample; morsels SHA-256 verified',
        },
        {
          case: `dd bs=1M again, from the mount's memory, ${mib}`,
          params: { bytes, samples: fromMemory },
          mbps: median(fromMemory),
          limitMbps: TARGET_MBPS,
          targetRatio: null,
          note: 'page cache dropped: the kernel ⇄ FUSE ⇄ node path alone',
        },
        {
          case: `md5sum through the mount, 4 donors, ${mib}`,
          params: { bytes, samples: md5.samples, localMd5sumMbps: local.mbps },
          mbps: md5.median,
          limitMbps: TARGET_MBPS,
          targetRatio: 1,
          note: `md5 = source; md5sum alone from page cache: ${local.mbps.toFixed(0)} MB/s`,
        },
      );
      if (get) {
        rows.push({
          case: `freeloader get -o /dev/null, same dataset`,
          params: { bytes, samples: get.samples },
          mbps: get.median,
          limitMbps: TARGET_MBPS,
          targetRatio: null,
          note: 'the client library without the kernel, for comparison',
        });
      }
    } finally {
      await cluster?.stop();
      await web.stop();
    }
    return ctx.report('mount-loopback', { bytes, reps }, rows, {});
  },
};
