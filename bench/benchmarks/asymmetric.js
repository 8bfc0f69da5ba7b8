// Seed 000 Fig. 9: asymmetric striping — part of the dataset on the host client's own agent,
// the rest over 8 remote 100 Mbit/s donors — swept over the local:remote ratio, for a 1 Gbit/s
// and a 100 Mbit/s host, next to the seed's overlap model
//   thpt(f) = 1 / max(f / thpt_l, (1 − f) / thpt_r)
// with thpt_l and thpt_r the rates measured at 1:0 and 0:8 in the same run. The host's "disk" is
// its loopback shaped to LOCAL_MBIT (a local read here would otherwise come from the page cache
// at memory speed). Then the manager chooses the ratio itself from the rates those two reads
// reported: target ≥ 0.90 of the model's peak thpt_l + thpt_r.
import { join } from 'node:path';
import { parseGetSummary } from '../lib/freeloader.js';
import { fileDigest } from '../lib/dataset.js';
import { addAgents } from '../lib/extra-agents.js';
import { startFreeLoaderLan } from '../lib/freeloader-lan.js';
import { startNginx } from '../lib/nginx.js';
import { plotPng } from '../lib/plot.js';
import { shapeDevice } from '../lib/shaping.js';
import { createTestbed, exec } from '../lib/testbed.js';

const TARGET_RATIO = 0.9;
const REMOTES = 8;
/** The host's emulated local disk read rate (Mbit/s on its loopback): 30 MB/s. */
const LOCAL_MBIT = Number(process.env.BENCH_LOCAL_MBIT ?? 240);

export default {
  name: 'asymmetric',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const hosts = listEnv('BENCH_HOST_MBIT') ?? [1000, 100];
    // Local morsels per cycle beside one per remote donor (0 = remote only); 1:0 is added.
    const locals =
      listEnv('BENCH_LOCALS') ?? (ctx.quick ? [2, 4, 8, 16] : [1, 2, 3, 4, 6, 8, 12, 16, 24]);
    const bytes = Number(process.env.BENCH_SIZE_MIB ?? (ctx.quick ? 192 : 1024)) * 2 ** 20;
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];
    /** @type {Array<{ title: string, points: Array<[number, number]> }>} */
    const series = [];
    for (const hostMbit of hosts) {
      const got = await sweep(ctx, hostMbit, locals, bytes);
      rows.push(...got.rows);
      series.push(...got.series);
    }
    const png = await plotPng(join(ctx.resultsDir, 'asymmetric.png'), {
      title: `asymmetric striping: host + ${REMOTES} × 100 Mbit/s donors (local disk ${LOCAL_MBIT / 8} MB/s)`,
      xlabel: 'fraction of the dataset on the host',
      ylabel: 'MB/s',
      series,
    });
    if (png) ctx.log(`plot: ${png}`);
    return ctx.report(
      'asymmetric',
      { hosts, locals, bytes, remotes: REMOTES, localMbit: LOCAL_MBIT },
      rows,
    );
  },
};

/**
 * One host setting on a fresh LAN (so rate history never mixes the two host links).
 *
 * @param {import('../lib/context.js').BenchContext} ctx
 * @param {number} hostMbit
 * @param {number[]} locals
 * @param {number} bytes
 */
async function sweep(ctx, hostMbit, locals, bytes) {
  const work = ctx.workDir(`asymmetric-${hostMbit}`);
  const tb = await createTestbed({
    donors: REMOTES,
    links: { client: { rateMbit: hostMbit } },
    log: ctx.log,
  });
  /** @type {import('../lib/report.js').Row[]} */
  const rows = [];
  /** @type {Array<[number, number]>} */
  const measured = [];
  /** @type {Array<[number, number]>} */
  const model = [];
  const label = `${hostMbit === 1000 ? '1 Gbit/s' : `${hostMbit} Mbit/s`} host`;
  try {
    await shapeDevice(/** @type {string} */ (tb.client.ns), 'lo', { rateMbit: LOCAL_MBIT }, false);
    await tb.shape(tb.source, { rateMbit: 1000 });
    const quota = ctx.quick ? '1GiB' : '3GiB';
    const fl = await startFreeLoaderLan(tb, { workDir: work, quota });
    const [host] = await addAgents(tb, fl, [tb.client], { workDir: work, quota: '4GiB' });
    if (!host) throw new Error('no host agent');
    const ds = await ctx.dataset(bytes);
    const source = await startNginx(tb.source, { root: ds.dir, workDir: join(work, 'nginx') });
    const read = async (/** @type {string} */ tag, /** @type {string[]} */ placement) => {
      const name = `bench/asym-${tag}`;
      const imported = await fl.cli(
        [
          'import',
          source.url(ds.name),
          '--name',
          name,
          '--width',
          String(REMOTES),
          ...placement,
          '--wait',
        ],
        900_000,
      );
      const out = join(work, `out-${tag}`);
      const got = await fl.cli(['get', name, '-o', out], 900_000);
      const { mbps, seconds } = parseGetSummary(got.stderr);
      if ((await fileDigest(out)).sha256 !== ds.sha256) throw new Error(`${name}: output differs`);
      await exec(tb.client, 'rm', ['-f', out]);
      await fl.cli(['rm', name]).catch(() => undefined);
      const share = Number(/([\d.]+) % on the host/.exec(imported.stderr)?.[1] ?? NaN) / 100;
      return { mbps, seconds, share, stderr: imported.stderr };
    };
    const asym = ['--policy', 'asymmetric', '--host', host.dir];
    // The endpoints first: they give the model its rates and train the manager's history.
    const remote = await read('0-8', [...asym, '--local-share', '0:8']);
    const local = await read('1-0', [...asym, '--local-share', '1:0']);
    const at = (/** @type {number} */ f) => 1 / Math.max(f / local.mbps, (1 - f) / remote.mbps);
    const peak = local.mbps + remote.mbps;
    const fOpt = local.mbps / peak;
    ctx.log(
      `${label}: thpt_l ${local.mbps} MB/s, thpt_r ${remote.mbps} MB/s, peak ${peak.toFixed(1)} at f=${fOpt.toFixed(3)}`,
    );
    const point = (
      /** @type {string} */ ratio,
      /** @type {number} */ f,
      /** @type {{ mbps: number, seconds: number }} */ r,
      /** @type {string} */ note,
    ) => {
      measured.push([f, r.mbps]);
      rows.push({
        case: `${label} ${ratio} (f=${f.toFixed(3)}), ${bytes / 2 ** 20} MiB`,
        params: { hostMbit, ratio, f, bytes, seconds: r.seconds },
        mbps: r.mbps,
        limitMbps: at(f),
        targetRatio: null,
        note,
      });
    };
    point(`0:${REMOTES}`, 0, remote, 'thpt_r (remote only); limit = model');
    for (const l of locals) {
      const r = await read(`${l}-8`, [...asym, '--local-share', `${l}:${REMOTES}`]);
      point(`${l}:${REMOTES}`, r.share, r, 'limit = model at this ratio');
    }
    point('1:0', 1, local, 'thpt_l (local only); limit = model');
    // The manager's own choice, from the rate history the reads above reported.
    const chosen = await read('chosen', asym);
    const reason = /placement: .*/.exec(chosen.stderr)?.[0] ?? '';
    rows.push({
      case: `${label} chosen f=${chosen.share.toFixed(3)} (model optimum ${fOpt.toFixed(3)})`,
      params: { hostMbit, f: chosen.share, fOpt, bytes, seconds: chosen.seconds },
      mbps: chosen.mbps,
      limitMbps: peak,
      targetRatio: TARGET_RATIO,
      note: `limit = model peak thpt_l + thpt_r; ${reason.replace(/^placement: /, '').slice(0, 110)}`,
    });
    measured.push([chosen.share, chosen.mbps]);
    for (let i = 0; i <= 40; i++) model.push([i / 40, at(i / 40)]);
    await source.stop();
  } finally {
    tb.teardown();
  }
  measured.sort((a, b) => a[0] - b[0]);
  return {
    rows,
    series: [
      { title: `${label}: measured`, points: measured },
      { title: `${label}: model`, points: model },
    ],
  };
}

/** @param {string} name @returns {number[] | null} */
function listEnv(name) {
  const text = process.env[name];
  return text ? text.split(',').map(Number) : null;
}
