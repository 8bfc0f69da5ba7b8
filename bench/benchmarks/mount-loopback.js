// Reading through `freeloader mount` on loopback from 4 donors (no shaping): `dd bs=1M` and
// `md5sum` of a 1 GiB dataset through the kernel, next to `freeloader get` of the same dataset
// and `md5sum` of the source file in the page cache (md5sum's own ceiling on this CPU). Every
// sample is a fresh mount, so neither the kernel's page cache nor the mount's morsel cache
// holds the file. The md5 read through the mount must equal the source's.
import { chmod, mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { freePortBlock } from '../lib/free-ports.js';
import { startLoopbackCluster } from '../lib/loopback-cluster.js';
import { getToNull, readThroughMount, servedNote, timedShell } from '../lib/mount.js';
import { startNginx } from '../lib/nginx.js';
import { LOOPBACK } from '../lib/processes.js';
import { run } from '../lib/sh.js';
import { median } from '../lib/stats.js';

/** Target from the mount issue: ≥ 1 GB/s through the mount on loopback with 4 donors. */
const TARGET_MBPS = 1000;
const NAME = 'bench/mount.bin';

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
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];

    // md5sum's own speed on this CPU, from the page cache: the ceiling for the md5sum row.
    await run('bash', ['-c', `cat '${ds.path}' > /dev/null`], { timeoutMs: 600_000 });
    const local = await timedShell(`md5sum '${ds.path}'`, bytes);
    const sourceMd5 = local.stdout.split(' ')[0] ?? '';

    // Fixed ports below the ephemeral range (an ephemeral base port left the agents' consecutive
    // ports to chance), moved as a block when something holds one of them.
    const [webPort] = await freePortBlock([7890]);
    const web = await startNginx(LOOPBACK, {
      root: ds.dir,
      workDir: join(work, 'nginx'),
      port: webPort,
    });
    /** @type {import('../lib/loopback-cluster.js').LoopbackCluster | undefined} */
    let cluster;
    try {
      // Its own manager, PostgreSQL (port + 1000) and agent ports: a developer's cluster may hold
      // the defaults.
      cluster = await startLoopbackCluster({
        home,
        agents: 4,
        quota: '2GiB',
        port: 7880,
        agentBasePort: 7881,
        log: ctx.log,
      });
      const cli = cluster.cli;
      // BENCH_MOUNT_CLEAR=1 imports in clear: what the default encryption costs the mount.
      const clear = process.env.BENCH_MOUNT_CLEAR === '1' ? ['--no-encrypt'] : [];
      await cli(
        ['import', web.url(ds.name), '--name', NAME, '--width', '4', ...clear, '--wait'],
        600_000,
      );
      // The comparison row; a failing `get` must not hide the mount's numbers.
      const get = await getToNull(cli, NAME, reps).catch((e) => {
        ctx.log(`freeloader get failed, no comparison row: ${e instanceof Error ? e.message : e}`);
        return undefined;
      });
      const reads = await readThroughMount({
        host: LOOPBACK,
        home,
        url: cluster.url,
        dir,
        file: join(dir, NAME),
        bytes,
        md5: sourceMd5,
        reps,
      });
      const mib = `${bytes / 2 ** 20} MiB`;
      rows.push(
        {
          case: `dd bs=1M through the mount, 4 donors, ${mib}`,
          params: { bytes, samples: reads.dd.samples },
          mbps: reads.dd.median,
          limitMbps: TARGET_MBPS,
          targetRatio: 1,
          note:
            `fresh mount per sample, default options; morsels SHA-256 verified; ` +
            servedNote(reads.served),
        },
        {
          case: `dd bs=1M, mount cache holding the whole file, ${mib}`,
          params: { bytes, samples: reads.ddLargeCache, cacheMb: reads.cacheMb },
          mbps: median(reads.ddLargeCache),
          limitMbps: TARGET_MBPS,
          targetRatio: null,
          note: 'fresh mount, --cache-mb for the whole file: its memory is first touched here',
        },
        {
          case: `dd bs=1M again, from the mount's memory, ${mib}`,
          params: { bytes, samples: reads.fromMemory },
          mbps: median(reads.fromMemory),
          limitMbps: TARGET_MBPS,
          targetRatio: null,
          note: 'page cache dropped: the kernel ⇄ FUSE ⇄ node path alone',
        },
        {
          // md5sum through any file system is at most md5sum's own speed on this CPU.
          case: `md5sum through the mount, 4 donors, ${mib}`,
          params: { bytes, samples: reads.md5.samples, localMd5sumMbps: local.mbps },
          mbps: reads.md5.median,
          limitMbps: Math.min(TARGET_MBPS, local.mbps),
          targetRatio: 1,
          note:
            `md5 = source; limit min(target, md5sum alone from page cache ` +
            `${local.mbps.toFixed(0)} MB/s); md5sum's core is not the mount's`,
        },
      );
      // What md5sum through the mount costs the whole machine, and the rate its cores allow.
      const busy = median(reads.md5Busy);
      const cores = availableParallelism();
      const ceiling = (cores * bytes) / 1e6 / busy;
      rows.push({
        case: `CPU-bound ceiling of md5sum through the mount on ${cores} cores`,
        params: { bytes, busyCpuSeconds: reads.md5Busy, cores },
        mbps: ceiling,
        limitMbps: null,
        targetRatio: null,
        note:
          `${((busy * 2 ** 30) / bytes).toFixed(2)} CPU-s per GiB, whole machine (md5sum ` +
          `alone ${(2 ** 30 / 1e6 / local.mbps).toFixed(2)}); md5sum reached ` +
          `${(reads.md5.median / ceiling).toFixed(2)} of it`,
      });
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
