// Seed 002 Fig. 5 and Table 2: client rate vs cached prefix ratio, with the model's predicted
// ratio marked. W storage donors hold the prefix; W other (idle) donors patch the suffix from a
// shaped source (nginx limit_rate per connection behind a per-request delay proxy). R_client is
// the fully cached read, R_patch the aggregate rate of a 0 % read, L the source's request
// overhead (median HEAD time); the model gives the ratio, and the client's rate there should
// be ≥ 0.95 of the fully cached one (the seed reached ≥ 0.90).
import { join } from 'node:path';
import { prefixRatio } from '@freeloader/striping';
import { startFreeLoaderLan } from '../lib/freeloader-lan.js';
import { plotPng } from '../lib/plot.js';
import {
  SOURCE_DELAY_MS,
  SOURCE_LIMIT_MIB_S,
  sessionRate,
  startSlowSource,
  timedGet,
} from '../lib/prefix-bench.js';
import { median } from '../lib/stats.js';
import { createTestbed, exec } from '../lib/testbed.js';

const MiB = 2 ** 20;
const TARGET = 0.95;

export default {
  name: 'prefix-ratio',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const width = ctx.quick ? 2 : 4;
    const bytes = (ctx.quick ? 128 : 1024) * MiB;
    const work = ctx.workDir('prefix-ratio');
    const tb = await createTestbed({ donors: 2 * width, log: ctx.log });
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];
    /** @type {Array<[number, number]>} */
    const curve = [];
    let predicted = 1;
    let full = 0;
    try {
      const { ds, url, stop: stopSource } = await startSlowSource(ctx, tb, bytes, work);
      const fl = await startFreeLoaderLan(tb, { workDir: work, quota: '4GiB' });
      const imp = async (/** @type {string} */ name) =>
        (
          await fl.cli(
            ['import', url, '--name', name, '--width', String(width), '--wait'],
            1_800_000,
          )
        ).stdout.trim();
      // The same file twice: one to measure R_patch at 0 %, one to sweep the ratio downwards.
      const probeId = await imp('bench/ratio-probe');
      const id = await imp('bench/ratio');
      const env = { FREELOADER_PATCH_WIDTH: String(width) };
      const out = join(work, 'out');
      const rClient = (await timedGet(tb, fl, 'bench/ratio', out, ds.sha256, env)).mbps;
      await fl.cli(['cache', 'cut', probeId, '0']);
      const zero = await timedGet(tb, fl, 'bench/ratio-probe', out, ds.sha256, env);
      const rPatch = (await sessionRate(tb, fl, probeId))?.mbps ?? zero.mbps;
      /** @type {number[]} */
      const heads = [];
      for (let i = 0; i < 3; i++) {
        const h = await exec(tb.client, 'curl', [
          '-sI',
          '-o',
          '/dev/null',
          '-w',
          '%{time_total}',
          url,
        ]);
        heads.push(Number(h.stdout));
      }
      const latency = median(heads);
      const model = (/** @type {number} */ l) =>
        Math.round(
          prefixRatio({
            sizeBytes: bytes,
            clientRate: rClient * 1e6,
            patchRate: rPatch * 1e6,
            startupLatencyS: l,
          }) * 1000,
        ) / 1000;
      // The seed's L is a 0-byte retrieval from the source. Ours also pays for opening the patch
      // session (client → manager → nodes → source): the effective L is what a 0 % read took
      // beyond moving S at R_patch. The target is checked at the ratio that L gives.
      const effective = Math.max(latency, zero.seconds - bytes / 1e6 / rPatch);
      const seedRatio = model(latency);
      predicted = model(effective);
      rows.push({
        case: 'Table 2: model inputs',
        params: {
          rClientMBs: rClient,
          rPatchMBs: rPatch,
          latencyS: latency,
          effectiveLatencyS: effective,
          seedRatio,
          predicted,
        },
        mbps: rPatch,
        limitMbps: rClient,
        note:
          `ratio ${(seedRatio * 100).toFixed(1)} % with L = HEAD ${latency.toFixed(2)} s; ` +
          `${(predicted * 100).toFixed(1)} % with effective L ${effective.toFixed(2)} s`,
      });
      const ratios = [...new Set([1, 0.8, 0.6, seedRatio, predicted, 0.4, 0.2, 0])].sort(
        (a, b) => b - a,
      );
      for (const ratio of ratios) {
        const cut = Math.floor((ratio * bytes) / MiB) * MiB;
        if (ratio < 1) await fl.cli(['cache', 'cut', id, String(cut)]);
        const read = await timedGet(tb, fl, 'bench/ratio', out, ds.sha256, env);
        if (ratio === 1) full = read.mbps;
        curve.push([ratio, read.mbps]);
        const atModel = ratio === predicted;
        const label = atModel
          ? ' (model, effective L)'
          : ratio === seedRatio
            ? ' (model, L = HEAD)'
            : '';
        rows.push({
          case: `prefix ${(ratio * 100).toFixed(1)} %${label}`,
          params: { ratio, cachedBytes: ratio === 1 ? bytes : cut, seconds: read.seconds },
          mbps: read.mbps,
          limitMbps: full || rClient,
          targetRatio: atModel ? TARGET : null,
          note: atModel ? 'at the predicted ratio vs fully cached' : '',
        });
      }
      await stopSource();
    } finally {
      tb.teardown();
    }
    const top = Math.max(...curve.map(([, y]) => y), 1);
    const png = await plotPng(join(ctx.resultsDir, 'prefix-ratio.png'), {
      title: `client rate vs prefix ratio (W=${width} storage + ${width} patching nodes)`,
      xlabel: 'prefix ratio',
      ylabel: 'MB/s',
      series: [
        { title: 'client rate', points: [...curve].sort((a, b) => a[0] - b[0]) },
        {
          title: `model: ${(predicted * 100).toFixed(1)} %`,
          points: [
            [predicted, 0],
            [predicted, top],
          ],
        },
      ],
    });
    if (png) ctx.log(`plot: ${png}`);
    return ctx.report(
      'prefix-ratio',
      { width, bytes, limitMiBs: SOURCE_LIMIT_MIB_S, delayMs: SOURCE_DELAY_MS },
      rows,
      { netem: tb.netem, latency: 'delay proxy' },
    );
  },
};
