// The machine's own ceiling: curl reading from nginx over loopback in the root namespace, no
// shaping, compared with the 1 GB/s the seed paper's client reached.
import { loopbackRead } from '../lib/baselines.js';
import { repeat } from '../lib/stats.js';

export default {
  name: 'loopback-nginx',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const bytes = (ctx.quick ? 256 : 1024) * 2 ** 20;
    const reps = ctx.quick ? 1 : 3;
    const ds = await ctx.dataset(bytes);
    const work = ctx.workDir('loopback-nginx');
    // Warm the page cache so the first sample does not measure the disk.
    await loopbackRead(ds, ds.dir, work);
    const m = await repeat(reps, async () => (await loopbackRead(ds, ds.dir, work)).mbps);
    const row = {
      case: `curl ← nginx on 127.0.0.1, ${bytes / 2 ** 20} MiB`,
      params: { bytes, samples: m.samples },
      mbps: m.median,
      limitMbps: 1000,
      note: 'limit: the 1 GB/s reference',
    };
    return ctx.report('loopback-nginx', { bytes, reps }, [row]);
  },
};
