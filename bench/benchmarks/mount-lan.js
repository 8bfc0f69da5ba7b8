// Reading through `freeloader mount` on the emulated LAN: a dataset striped over W 100 Mbit/s
// donors, mounted on the 1 Gbit/s client (the mount's network lives in the client namespace), read
// with `dd bs=1M` and `md5sum` through the kernel, next to `freeloader get -o /dev/null` of the
// same dataset and the limit min(client goodput, Σ donor goodput) measured in the same run. Every
// sample is a fresh mount; the md5 read through the mount must equal the source's.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { importRoundRobin } from '../lib/freeloader-lan.js';
import { measureLanLimits } from '../lib/goodput.js';
import { getToNull, readThroughMount, servedNote, timedShell } from '../lib/mount.js';
import { plotPng } from '../lib/plot.js';
import { median } from '../lib/stats.js';
import { createTestbed, startFreeLoaderLan, startNginx } from '../lib/testbed.js';

/** The target for reads through the mount, as a fraction of the link limit. */
const TARGET_RATIO = 0.9;

export default {
  name: 'mount-lan',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    // BENCH_WIDTHS=4,8 and BENCH_SIZES_MIB=256 narrow a run, as in stripe-width.
    const widths = listEnv('BENCH_WIDTHS') ?? (ctx.quick ? [1, 4, 8] : [1, 2, 4, 6, 8, 10, 12]);
    const bytes = (listEnv('BENCH_SIZES_MIB')?.[0] ?? (ctx.quick ? 64 : 256)) * 2 ** 20;
    const reps = ctx.quick ? 1 : 3;
    const work = ctx.workDir('mount-lan');
    const dir = join(work, 'mnt');
    await mkdir(dir);
    const ds = await ctx.dataset(bytes);
    const sourceMd5 = (await timedShell(`md5sum '${ds.path}'`, bytes)).stdout.split(' ')[0] ?? '';
    const tb = await createTestbed({ donors: Math.max(...widths), log: ctx.log });
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];
    /** @type {Record<string, Array<[number, number]>>} */
    const series = { 'dd through the mount': [], 'freeloader get': [], limit: [] };
    /** @type {Record<string, unknown>} */
    const links = {};
    try {
      const lan = await measureLanLimits(tb, {
        workDir: work,
        seconds: ctx.quick ? 1 : 2,
        clientSamples: ctx.quick ? 1 : 3,
      });
      Object.assign(links, { clientMbps: lan.client, donorMbps: lan.donors });
      // Imports are setup, not what is measured: give the source a fast link while importing.
      await tb.shape(tb.source, { rateMbit: 1000 });
      const fl = await startFreeLoaderLan(tb, {
        workDir: work,
        quota: ctx.quick ? '1GiB' : '4GiB',
      });
      const source = await startNginx(tb.source, { root: ds.dir, workDir: join(work, 'nginx') });
      const mib = `${bytes / 2 ** 20} MiB`;
      for (const w of widths) {
        const name = `bench/mount-w${w}.bin`;
        await importRoundRobin(fl, source.url(ds.name), name, w);
        const limit = lan.limit(w);
        const get = await getToNull(fl.cli, name, reps);
        const reads = await readThroughMount({
          host: tb.client,
          home: fl.cliHome,
          url: fl.url,
          dir,
          file: join(dir, name),
          bytes,
          md5: sourceMd5,
          reps,
          // The memory path is the same at every width: one sample each.
          memoryReps: 1,
        });
        await fl.cli(['rm', name]).catch(() => undefined);
        const waits = servedNote(reads.served);
        rows.push(
          {
            case: `dd bs=1M through the mount W=${w}, ${mib}`,
            params: { W: w, bytes, samples: reads.dd.samples },
            mbps: reads.dd.median,
            limitMbps: limit,
            targetRatio: TARGET_RATIO,
            note: `fresh mount per sample, default options; limit min(client, Σ donors); ${waits}`,
          },
          {
            case: `md5sum through the mount W=${w}, ${mib}`,
            params: { W: w, bytes, samples: reads.md5.samples },
            mbps: reads.md5.median,
            limitMbps: limit,
            targetRatio: TARGET_RATIO,
            note: 'md5 = source',
          },
          {
            case: `freeloader get -o /dev/null W=${w}, ${mib}`,
            params: { W: w, bytes, samples: get.samples },
            mbps: get.median,
            limitMbps: limit,
            targetRatio: null,
            note: `the client library without the kernel; mount dd/get = ${(reads.dd.median / get.median).toFixed(2)}×`,
          },
          {
            case: `dd again from the mount's memory W=${w}, ${mib}`,
            params: { W: w, bytes, samples: reads.fromMemory },
            mbps: median(reads.fromMemory),
            limitMbps: null,
            targetRatio: null,
            note: 'page cache dropped, no network: the kernel ⇄ FUSE ⇄ node path alone',
          },
        );
        series['dd through the mount']?.push([w, reads.dd.median]);
        series['freeloader get']?.push([w, get.median]);
        series.limit?.push([w, limit]);
      }
      await source.stop();
    } finally {
      tb.teardown();
    }
    const png = await plotPng(join(ctx.resultsDir, 'mount-lan.png'), {
      title: 'reads through freeloader mount vs stripe width (100 Mbit/s donors, 1 Gbit/s client)',
      xlabel: 'stripe width W (donors)',
      ylabel: 'MB/s',
      series: Object.entries(series).map(([title, points]) => ({ title, points })),
    });
    if (png) ctx.log(`plot: ${png}`);
    return ctx.report('mount-lan', { widths, bytes, reps }, rows, { netem: tb.netem, ...links });
  },
};

/** @param {string} name @returns {number[] | null} */
function listEnv(name) {
  const text = process.env[name];
  return text ? text.split(',').map(Number) : null;
}
