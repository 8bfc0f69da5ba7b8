// Seed 002 Fig. 4 and Table 1: collective download. A dataset with nothing cached (0 % prefix)
// is read with `freeloader get`; p patching nodes (idle donors, 100 Mbit/s) download it from a
// shaped source in contiguous requests of a given size, shuffle it into 1 MiB stripes and serve
// the client. The source: nginx with a per-connection `limit_rate` behind a proxy that delays
// every request (the per-request cost of tape/GridFTP sources; this kernel has no netem).
// Rows: aggregate patch rate (Σ node download+shuffle rates, from the nodes' reports) per
// request size and width; the client's rate; aria2c -x p -s p from one host on the same source.
import { join } from 'node:path';
import { startFreeLoaderLan } from '../lib/freeloader-lan.js';
import { plotPng } from '../lib/plot.js';
import {
  SOURCE_DELAY_MS,
  SOURCE_LIMIT_MIB_S,
  aria2Parallel,
  sessionRate,
  startSlowSource,
  timedGet,
} from '../lib/prefix-bench.js';
import { createTestbed } from '../lib/testbed.js';

const MiB = 2 ** 20;

export default {
  name: 'prefix-collective',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    // BENCH_WIDTHS=1,4 BENCH_REQUEST_MIB=1,64 BENCH_DATASET_MIB=256 narrow a run.
    const widths = listEnv('BENCH_WIDTHS') ?? (ctx.quick ? [1, 4] : [1, 2, 4, 6, 8, 10]);
    const sizes = (
      listEnv('BENCH_REQUEST_MIB') ?? (ctx.quick ? [1, 16, 64] : [1, 16, 64, 256])
    ).map((m) => m * MiB);
    const bytes = (listEnv('BENCH_DATASET_MIB')?.[0] ?? (ctx.quick ? 64 : 512)) * MiB;
    const work = ctx.workDir('prefix-collective');
    const tb = await createTestbed({ donors: Math.max(...widths), log: ctx.log });
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];
    /** @type {Record<string, Array<[number, number]>>} */
    const series = {};
    try {
      const { ds, url: sourceUrl, stop: stopSource } = await startSlowSource(ctx, tb, bytes, work);
      const fl = await startFreeLoaderLan(tb, { workDir: work, quota: '4GiB' });
      const name = 'bench/collective';
      const id = (
        await fl.cli(['import', sourceUrl, '--name', name, '--wait'], 1_800_000)
      ).stdout.trim();
      // Nothing cached: every byte is patched.
      await fl.cli(['cache', 'cut', id, '0']);
      const out = join(work, 'out');
      for (const p of widths) {
        series[`p=${p}`] = [];
        /** @type {Map<number, number>} */
        const byRequest = new Map();
        for (const rs of sizes) {
          if (rs * p > bytes && rs > (sizes[0] ?? 0)) continue; // a request past a node's share
          const read = await timedGet(tb, fl, name, out, ds.sha256, {
            FREELOADER_PATCH_WIDTH: String(p),
            FREELOADER_PATCH_REQUEST_SIZE: String(rs),
          });
          const session = await sessionRate(tb, fl, id);
          const agg = session?.mbps ?? 0;
          byRequest.set(rs, agg);
          series[`p=${p}`]?.push([rs / MiB, agg]);
          rows.push({
            case: `patch p=${p} request ${rs / MiB} MiB`,
            params: { p, requestBytes: rs, bytes, nodes: session?.width ?? null },
            mbps: agg,
            limitMbps: (p * SOURCE_LIMIT_MIB_S * MiB) / 1e6,
            note: `download+shuffle (Σ nodes); client got ${read.mbps.toFixed(1)} MB/s`,
          });
          rows.push({
            case: `client p=${p} request ${rs / MiB} MiB`,
            params: { p, requestBytes: rs, bytes, seconds: read.seconds },
            mbps: read.mbps,
            limitMbps: (p * SOURCE_LIMIT_MIB_S * MiB) / 1e6,
            note: '0 % prefix: the client access rate of Table 1',
          });
        }
        const small = byRequest.get(sizes[0] ?? MiB) ?? 0;
        const big = Math.max(...byRequest.values());
        rows.push({
          case: `large vs 1 MiB requests p=${p}`,
          params: { p },
          mbps: big,
          limitMbps: small,
          targetRatio: 1.5,
          note: 'seed Fig. 4: +55 % … +114 % at 256 MB',
        });
        const biggest = [...byRequest.keys()].pop() ?? MiB;
        const aria = await aria2Parallel(tb.client, sourceUrl, p, biggest, ds, work);
        rows.push({
          case: `aria2c -x ${p} one host, ${biggest / MiB} MiB pieces`,
          params: { p, seconds: aria.seconds },
          mbps: aria.mbps,
          limitMbps: (p * SOURCE_LIMIT_MIB_S * MiB) / 1e6,
          note: 'Table 1 "download" (no shuffle)',
        });
        rows.push({
          case: `FreeLoader patch vs aria2c p=${p}`,
          params: { p },
          mbps: big,
          limitMbps: aria.mbps,
          targetRatio: 1,
          note: 'ratio = collective download / aria2c -x p (target ≥ 1.0×)',
        });
      }
      await stopSource();
    } finally {
      tb.teardown();
    }
    const png = await plotPng(join(ctx.resultsDir, 'prefix-collective.png'), {
      title: `aggregate patch rate vs request size (source ${SOURCE_LIMIT_MIB_S} MiB/s per connection, ${SOURCE_DELAY_MS} ms per request)`,
      xlabel: 'request size (MiB)',
      ylabel: 'MB/s',
      series: Object.entries(series).map(([title, points]) => ({ title, points })),
    });
    if (png) ctx.log(`plot: ${png}`);
    return ctx.report(
      'prefix-collective',
      { widths, sizes, bytes, limitMiBs: SOURCE_LIMIT_MIB_S, delayMs: SOURCE_DELAY_MS },
      rows,
      { netem: tb.netem, latency: 'delay proxy' },
    );
  },
};

/** @param {string} name @returns {number[] | null} */
function listEnv(name) {
  const text = process.env[name];
  return text ? text.split(',').map(Number) : null;
}
