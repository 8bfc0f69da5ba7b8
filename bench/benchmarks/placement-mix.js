// Seed 000 Fig. 8: a dataset striped over a mix of 1 Gbit/s and 100 Mbit/s donors into a
// 1 Gbit/s client, from all-fast (0:3) to 7 slow beside the 3 fast (7:3) — round-robin (equal
// shares: the fast donors wait for the slow) against predictive (shares by observed rate). The
// slow donors are inducted one at a time, as in the seed; the round-robin read of each mix is
// also what trains the manager's rate history (the seed trained with several 1 GB transfers).
// Limit: min(client goodput, Σ donor goodput), measured on the same links in the same run.
import { join } from 'node:path';
import { parseGetSummary } from '../lib/freeloader.js';
import { fileDigest } from '../lib/dataset.js';
import { addAgents, listAgents, managerGet } from '../lib/extra-agents.js';
import { startFreeLoaderLan } from '../lib/freeloader-lan.js';
import { measureGoodput } from '../lib/goodput.js';
import { startNginx } from '../lib/nginx.js';
import { plotPng } from '../lib/plot.js';
import { repeat } from '../lib/stats.js';
import { createTestbed, exec } from '../lib/testbed.js';

const TARGET_RATIO = 0.9;
const FAST = 3;

export default {
  name: 'placement-mix',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    // BENCH_MIX=0,1,7 and BENCH_SIZE_MIB=256 narrow a run.
    const mixes = listEnv('BENCH_MIX') ?? (ctx.quick ? [0, 1, 3, 7] : [0, 1, 2, 3, 4, 5, 6, 7]);
    const bytes = Number(process.env.BENCH_SIZE_MIB ?? (ctx.quick ? 192 : 1024)) * 2 ** 20;
    const slowCount = Math.max(...mixes);
    const perHost = Object.fromEntries(
      Array.from({ length: FAST }, (_, i) => [`d${i + 1}`, { rateMbit: 1000 }]),
    );
    const work = ctx.workDir('placement-mix');
    const tb = await createTestbed({ donors: FAST + slowCount, perHost, log: ctx.log });
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];
    /** @type {Record<'round-robin' | 'predictive' | 'limit', Array<[number, number]>>} */
    const series = { 'round-robin': [], predictive: [], limit: [] };
    try {
      const gp = (/** @type {import('../lib/testbed.js').LanHost} */ from, mbit = 1000) =>
        measureGoodput(from, tb.client, Math.round((mbit / 8) * 1e6 * (ctx.quick ? 1 : 2)), work);
      const clientGp = (await repeat(ctx.quick ? 1 : 3, async () => (await gp(tb.manager)).mbps))
        .median;
      const fastGp = (await gp(/** @type {any} */ (tb.donors[0]))).mbps;
      const slowGp = (await gp(/** @type {any} */ (tb.donors[FAST]), 100)).mbps;
      ctx.log(
        `goodput: client ${clientGp.toFixed(1)}, fast ${fastGp.toFixed(1)}, slow ${slowGp.toFixed(1)} MB/s`,
      );

      await tb.shape(tb.source, { rateMbit: 1000 });
      const fastHosts = tb.donors.slice(0, FAST);
      const fl = await startFreeLoaderLan(
        { ...tb, donors: fastHosts },
        {
          workDir: work,
          quota: ctx.quick ? '1GiB' : '3GiB',
        },
      );
      const ds = await ctx.dataset(bytes);
      const source = await startNginx(tb.source, { root: ds.dir, workDir: join(work, 'nginx') });
      let inducted = 0;
      for (const slow of mixes) {
        if (slow > inducted) {
          await addAgents(tb, fl, tb.donors.slice(FAST + inducted, FAST + slow), {
            workDir: work,
            quota: ctx.quick ? '1GiB' : '3GiB',
          });
          inducted = slow;
        }
        const width = FAST + slow;
        const limit = Math.min(clientGp, FAST * fastGp + slow * slowGp);
        series.limit.push([slow, limit]);
        for (const policy of /** @type {const} */ (['round-robin', 'predictive'])) {
          if (policy === 'predictive') await logRates(ctx, tb, fl);
          const name = `bench/mix${slow}-${policy}`;
          const imported = await fl.cli(
            [
              'import',
              source.url(ds.name),
              '--name',
              name,
              '--width',
              String(width),
              '--policy',
              policy,
              '--wait',
            ],
            900_000,
          );
          const out = join(work, `out-${slow}-${policy}`);
          const got = await fl.cli(['get', name, '-o', out], 900_000);
          const { mbps, seconds } = parseGetSummary(got.stderr);
          const { sha256 } = await fileDigest(out);
          if (sha256 !== ds.sha256) throw new Error(`${name}: output differs from the source`);
          await exec(tb.client, 'rm', ['-f', out]);
          await fl.cli(['rm', name]).catch(() => undefined);
          series[policy].push([slow, mbps]);
          const placement = /placement: .*/.exec(imported.stderr)?.[0] ?? '';
          ctx.log(`${name}: ${placement}`);
          rows.push({
            case: `${policy} ${slow}:${FAST} (W=${width}), ${bytes / 2 ** 20} MiB`,
            params: { slow, fast: FAST, width, bytes, seconds, policy },
            mbps,
            limitMbps: limit,
            targetRatio: policy === 'predictive' ? TARGET_RATIO : null,
            note: `sha256 ok; ${placement.replace(/^placement: \S+ /, '').slice(0, 90)}`,
          });
        }
      }
      await source.stop();
    } finally {
      tb.teardown();
    }
    const png = await plotPng(join(ctx.resultsDir, 'placement-mix.png'), {
      title: 'heterogeneous donors: 100 Mbit/s : 1 Gbit/s mix (1 Gbit/s client)',
      xlabel: 'slow donors beside 3 fast ones',
      ylabel: 'MB/s',
      series: [
        { title: 'round-robin', points: series['round-robin'] },
        { title: 'predictive', points: series.predictive },
        { title: 'limit: min(client, Σ donor goodput)', points: series.limit },
      ],
    });
    if (png) ctx.log(`plot: ${png}`);
    return ctx.report('placement-mix', { mixes, bytes, fast: FAST }, rows, { netem: tb.netem });
  },
};

/**
 * What the predictive policy will go by: each donor's decaying average rate (MB/s), by name.
 *
 * @param {import('../lib/context.js').BenchContext} ctx
 * @param {import('../lib/testbed.js').Testbed} tb
 * @param {import('../lib/freeloader-lan.js').FreeLoaderLan} fl
 */
async function logRates(ctx, tb, fl) {
  const names = new Map((await listAgents(tb, fl)).map((a) => [a.id, a.name]));
  const rates = /** @type {Array<{ agentId: string, rate: number, samples: number }>} */ (
    await managerGet(tb, fl, '/rates')
  );
  ctx.log(
    `rate history: ${rates
      .map((r) => `${names.get(r.agentId)} ${(r.rate / 1e6).toFixed(1)}`)
      .sort()
      .join(', ')} MB/s`,
  );
}

/** @param {string} name @returns {number[] | null} */
function listEnv(name) {
  const text = process.env[name];
  return text ? text.split(',').map(Number) : null;
}
