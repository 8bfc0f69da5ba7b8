// Baselines for the stripe-width figure: aria2c reading one dataset from W nginx mirrors (each a
// 100 Mbit/s donor holding a full copy) into the 1 Gbit/s client, and curl reading it straight
// from the WAN source. Each rate is compared with the measured goodput of the links involved.
import { join } from 'node:path';
import { aria2Read, curlRead } from '../lib/baselines.js';
import { measureGoodput } from '../lib/goodput.js';
import { startNginx } from '../lib/nginx.js';
import { plotPng } from '../lib/plot.js';
import { repeat } from '../lib/stats.js';
import { createTestbed } from '../lib/testbed.js';

export default {
  name: 'baselines-stripe',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const widths = ctx.quick ? [1, 4] : [1, 2, 4, 8, 12];
    const bytes = (ctx.quick ? 64 : 256) * 2 ** 20;
    const probeSeconds = ctx.quick ? 1 : 2;
    const work = ctx.workDir('baselines-stripe');
    const ds = await ctx.dataset(bytes);
    const tb = await createTestbed({ donors: Math.max(...widths), log: ctx.log });
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];
    /** @type {Array<[number, number]>} */
    const aria = [];
    /** @type {Array<[number, number]>} */
    const limits = [];
    try {
      // Limits first, on idle links: one curl stream per link.
      const probe = (
        /** @type {import('../lib/testbed.js').LanHost} */ from,
        /** @type {number} */ rateMbit,
      ) => measureGoodput(from, tb.client, Math.round((rateMbit / 8) * 1e6 * probeSeconds), work);
      // The 1 Gbit/s link is the one CPU contention disturbs (2 shared cores): median of 3.
      const clientGp = (
        await repeat(ctx.quick ? 1 : 3, async () => (await probe(tb.manager, 1000)).mbps)
      ).median;
      /** @type {number[]} */
      const donorGp = [];
      for (const d of tb.donors) donorGp.push((await probe(d, 100)).mbps);
      const sourceGp = (await probe(tb.source, 50)).mbps;
      const sum = (/** @type {number} */ w) => donorGp.slice(0, w).reduce((a, b) => a + b, 0);
      rows.push(
        {
          case: 'goodput client link (mgr→cl)',
          mbps: clientGp,
          limitMbps: 125,
          note: 'vs tc rate',
        },
        {
          case: `goodput donor links (mean of ${donorGp.length})`,
          mbps: sum(donorGp.length) / donorGp.length,
          limitMbps: 12.5,
          note: 'vs tc rate',
        },
        {
          case: 'goodput source link (src→cl)',
          mbps: sourceGp,
          limitMbps: 6.25,
          note: `vs tc rate${tb.netem ? '' : '; no netem: delay not emulated'}`,
        },
      );

      const mirrors = await Promise.all(
        tb.donors.map((d) =>
          startNginx(d, { root: ds.dir, workDir: join(work, `nginx-${d.name}`) }),
        ),
      );
      const source = await startNginx(tb.source, {
        root: ds.dir,
        workDir: join(work, 'nginx-src'),
      });
      for (const w of widths) {
        const urls = mirrors.slice(0, w).map((m) => m.url(ds.name));
        const read = await aria2Read(tb.client, urls, ds, work);
        const limit = Math.min(clientGp, sum(w));
        rows.push({
          case: `aria2c W=${w}`,
          params: { W: w, bytes, seconds: read.seconds },
          mbps: read.mbps,
          limitMbps: limit,
          note: 'sha256 ok; limit min(client, Σ donors)',
        });
        aria.push([w, read.mbps]);
        limits.push([w, limit]);
      }
      const wan = await curlRead(tb.client, source.url(ds.name), { expectBytes: bytes });
      rows.push({
        case: 'curl from source (WAN)',
        params: { bytes, seconds: wan.seconds },
        mbps: wan.mbps,
        limitMbps: sourceGp,
        note: 'limit: source goodput',
      });
    } finally {
      tb.teardown();
    }
    const png = await plotPng(join(ctx.resultsDir, 'baselines-stripe.png'), {
      title: `aria2c from W mirrors, ${bytes / 2 ** 20} MiB`,
      xlabel: 'stripe width W (mirrors)',
      ylabel: 'MB/s',
      series: [
        { title: 'aria2c', points: aria },
        { title: 'limit: min(client, Σ donor goodput)', points: limits },
      ],
    });
    if (png) ctx.log(`plot: ${png}`);
    return ctx.report('baselines-stripe', { widths, bytes, sha256: ds.sha256 }, rows, {
      netem: tb.netem,
    });
  },
};
