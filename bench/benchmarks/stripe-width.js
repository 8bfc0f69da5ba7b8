// ─── SKELETON ─────────────────────────────────────────────────────────────────────────────────
// FreeLoader's stripe-width figure: `freeloader get` of one dataset striped over W donors, next
// to the aria2c baseline of baselines-stripe. NOT IMPLEMENTED YET: run() always throws, so no
// number can ever come out of this file before the real measurement is written.
//
// Plan, with the helpers bench/lib/testbed.js exports (every process dies with tb.teardown()):
//   const tb = await createTestbed({ donors: Math.max(...widths), log: ctx.log });
//   const source = await startNginx(tb.source, { root: ds.dir, workDir });     // the WAN source
//   const fl = await startFreeLoaderLan(tb, { workDir });   // manager, signed-in CLI, live agents
//   per W: await fl.cli(['import', source.url(ds.name), '--name', `w${W}/${ds.name}`, '--width', W, '--wait']);
//          time fl.cli(['get', `w${W}/${ds.name}`, '-o', out]), verify the sha256, and report a row
//          limited by min(client goodput, Σ goodput of the W donors) from measureGoodput.
// startFreeLoaderLan is tested up to enrolment (agents live); `import` answered
// "no route POST /api/v1/datasets" when this skeleton was written.
// ──────────────────────────────────────────────────────────────────────────────────────────────
import { missingDataPath } from '../lib/testbed.js';

export default {
  name: 'stripe-width',
  /** @param {import('../lib/context.js').BenchContext} _ctx */
  async run(_ctx) {
    const missing = await missingDataPath();
    const why = missing.length
      ? `missing ${missing.join(', ')}`
      : 'bench/benchmarks/stripe-width.js is a skeleton';
    throw new Error(`FreeLoader data path not available yet (${why}); no numbers produced`);
  },
};
