// ─── SKELETON ─────────────────────────────────────────────────────────────────────────────────
// FreeLoader's stripe-width figure: `freeloader get` of one dataset striped over W donors, next
// to the aria2c baseline of baselines-stripe. NOT IMPLEMENTED YET: run() always throws, so no
// number can ever come out of this file before the real measurement is written.
//
// Plan, with the helpers bench/lib/testbed.js exports (every process dies with tb.teardown()):
//   const tb = await createTestbed({ donors: Math.max(...widths), log: ctx.log });
//   const source = await startNginx(tb.source, { root: ds.dir, workDir });          // WAN source
//   const mgr = spawnFreeLoader(tb.manager, ['manager', '--listen', `${tb.manager.ip}:7400`],
//     { home: `${work}/mgr`, logDir: work });
//   await waitForPort(tb.client, tb.manager.ip, 7400, { what: 'manager', logPath: mgr.logPath, timeoutMs: 60000 });
//   // admin password: `${work}/mgr/manager/admin-password`; then in the client namespace:
//   await runFreeLoader(tb.client, ['login', '--manager', url], { home: cli, env: { FREELOADER_PASSWORD } });
//   const token = (await runFreeLoader(tb.client, ['token', 'create', '--uses', String(n)], { home: cli })).stdout;
//   for (const d of tb.donors) spawnFreeLoader(d, ['agent', '--manager', url, '--token', token, '--dir', dir,
//     '--quota', '2GiB', '--listen', `${d.ip}:7500`, '--advertise', `http://${d.ip}:7500`], { home, logDir: work });
//   per W: runFreeLoader(tb.client, ['import', source.url(ds.name), '--width', W, '--wait'], …);
//          time runFreeLoader(tb.client, ['get', path, '-o', out], …), verify sha256, row with
//          limit min(client goodput, Σ goodput of the W donors) from measureGoodput.
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
