import { chainRates, repairRatios, unavailability } from '@freeloader/striping';
import { weibullMean } from './availability-random.js';
import { PAPER_DEFAULTS, simulateAvailability } from './availability-sim.js';

/**
 * The experiments behind `npm run sim:availability`: seed 003's Figures 4, 8, 10, 12 and 14
 * (plus its Fig. 3 model check), each a sweep of one setting through the simulator, with the
 * analytical p0 beside it where the model applies. Kept apart from the script so a `quick`
 * sweep is unit-tested.
 */

const YEAR = 365 * 86400;

/**
 * @typedef {import('./availability-sim.js').SimConfig} SimConfig
 *
 * @typedef {object} Point
 * @property {number} x the swept setting
 * @property {string} series
 * @property {Record<string, number>} sim summary of one run
 * @property {Record<string, number>} model p0 variants (empty when the model does not apply)
 *
 * @typedef {object} Figure
 * @property {string} id file stem, e.g. 'fig10'
 * @property {string} title
 * @property {string} xlabel
 * @property {'unavailability' | 'lost'} metric
 * @property {string} what one line on what the paper's figure shows
 * @property {Point[]} points
 */

/**
 * The model's p0 for a configuration: μ from permanent failures only (the paper's seeding), and
 * μ from every failure that triggers repair (transient ones past the detection timeout treated as
 * destructive, as the model assumes of all failures); λ conservative (paper) and parallel.
 *
 * @param {SimConfig} c
 * @returns {Record<string, number>}
 */
export function modelFor(c) {
  const permanentPerS = Number.isFinite(c.permanentMttfS) ? 1 / c.permanentMttfS : 0;
  let detectedPerS = 0;
  if (c.transient) {
    const cycle = weibullMean(c.transient.shape, c.transient.scaleS) + c.downtimeMeanS;
    detectedPerS = Math.exp(-c.detectAfterS / c.downtimeMeanS) / cycle;
  }
  /** @type {Record<string, number>} */
  const out = {};
  if (c.BMbps <= 0) return out;
  const base = {
    objectBytes: c.objectBytes,
    bytesPerDonor: (c.objects * c.n * c.objectBytes) / c.nodes,
    donorRepairBytesPerS: (c.bMbps * 1e6) / 8,
    sourceRepairBytesPerS: (c.BMbps * 1e6) / 8,
  };
  for (const [name, perS] of [
    ['permanent', permanentPerS],
    ['detected', permanentPerS + detectedPerS],
  ]) {
    if (!(Number(perS) > 0)) continue;
    for (const parallel of [false, true]) {
      const rates = chainRates({ ...base, donorMttfS: 1 / Number(perS), parallel });
      out[`${name}${parallel ? 'Parallel' : 'Paper'}`] = unavailability(c.n, repairRatios(rates));
    }
  }
  return out;
}

/**
 * @param {import('./availability-sim.js').SimResult} r
 * @param {number} seconds
 * @returns {Record<string, number>}
 */
function summary(r, seconds) {
  const u = [...r.unavailability].sort((a, b) => a - b);
  const at = (/** @type {number} */ p) => u[Math.min(u.length - 1, Math.floor(p * u.length))] ?? 0;
  return {
    mean: r.meanUnavailability,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: u[u.length - 1] ?? 0,
    zeroFraction: u.filter((x) => x === 0).length / Math.max(1, u.length),
    lostFraction: r.lostFraction,
    nodeTB: r.nodeBytes / 1e12,
    sourceTB: r.sourceBytes / 1e12,
    transfers: r.transfers,
    aborted: r.aborted,
    transientFailures: r.transientFailures,
    permanentFailures: r.permanentFailures,
    peakDayTB: Math.max(0, ...r.trafficByDay.map(([, b]) => b)) / 1e12,
    seconds,
  };
}

/**
 * @typedef {object} FigureOptions
 * @property {boolean} [quick] tiny sizes, for tests: seconds, not minutes
 * @property {number} [years] simulated time of each run
 * @property {number} [seed]
 * @property {(line: string) => void} [log]
 */

/**
 * @param {FigureOptions} [options]
 * @returns {Figure[]}
 */
export function runFigures(options = {}) {
  const quick = options.quick ?? false;
  const years = options.years ?? (quick ? 0.25 : 1);
  const log = options.log ?? (() => {});
  // Full runs keep the paper's 1,000 nodes and 32 TB; quick ones a tenth of both (same data per
  // node, so the same repair ratios) and a fraction of the time.
  const nodes = quick ? 100 : PAPER_DEFAULTS.nodes;
  const objects = quick ? 3200 : PAPER_DEFAULTS.objects;
  /** @type {Partial<SimConfig>} */
  const common = { nodes, objects, years, seed: options.seed ?? 1 };
  /**
   * @param {string} series
   * @param {number} x
   * @param {Partial<SimConfig>} cfg
   * @param {boolean} withModel
   * @returns {Point}
   */
  const run = (series, x, cfg, withModel) => {
    const c = { ...PAPER_DEFAULTS, ...common, ...cfg };
    const t0 = Date.now();
    const r = simulateAvailability(c);
    const seconds = (Date.now() - t0) / 1000;
    log(
      `  ${series} x=${x}: mean unavailability ${r.meanUnavailability.toExponential(2)}, ${seconds.toFixed(1)} s`,
    );
    return { x, series, sim: summary(r, seconds), model: withModel ? modelFor(c) : {} };
  };
  /** @type {Figure[]} */
  const figures = [];
  const figure = (/** @type {Omit<Figure, 'points'>} */ f, /** @type {() => Point[]} */ points) => {
    log(`${f.id}: ${f.title}`);
    figures.push({ ...f, points: points() });
  };

  figure(
    {
      id: 'fig3-model',
      title: 'model vs simulator: permanent failures only (seed Fig. 3)',
      xlabel: 'volatile node repair bandwidth b (Mbps)',
      metric: 'unavailability',
      what:
        'unavailability predicted by p0 and measured with transient failures off, n = 2, ' +
        '4 years (below b = 0.25 Mbps the source saturates and the model no longer applies)',
    },
    () =>
      (quick ? [0.25, 1] : [0.0625, 0.125, 0.25, 0.5, 1, 2]).map((b) =>
        run('n=2', b, { n: 2, bMbps: b, transient: null, years: quick ? 1 : 4 }, true),
      ),
  );
  figure(
    {
      id: 'fig4',
      title: 'objects lost without a durable component (seed Fig. 4)',
      xlabel: 'storage load, TB at 1,000 nodes',
      metric: 'lost',
      what: 'fraction of objects lost at the end, B = 0, as the stored volume grows',
    },
    () => {
      // A tenth of the nodes and of the data (same load per node): the biggest loads would
      // otherwise take most of the run's budget.
      const scaleNodes = quick ? 20 : 100;
      const scale = scaleNodes / 1000;
      return [
        { n: 2, b: 0.5 },
        { n: 2, b: 1 },
        { n: 3, b: 1 },
        { n: 3, b: 2 },
        { n: 4, b: 4 },
      ].flatMap(({ n, b }) =>
        (quick ? [16, 64] : [16, 32, 64, 128]).map((tb) => {
          const objs = Math.round(tb * 1000 * scale);
          return run(
            `n=${n} b=${b} Mbps`,
            tb,
            {
              n,
              bMbps: b,
              BMbps: 0,
              nodes: scaleNodes,
              objects: objs,
              diskObjects: Math.ceil((3 * objs * n) / scaleNodes),
              years: quick ? 0.25 : 4,
            },
            false,
          );
        }),
      );
    },
  );
  figure(
    {
      id: 'fig8',
      title: 'unavailability vs durable bandwidth B (seed Fig. 8)',
      xlabel: 'durable component bandwidth B (Mbps)',
      metric: 'unavailability',
      what: 'object unavailability as B grows, b = 2 Mbps, n = 3',
    },
    () => (quick ? [1, 8] : [1, 2, 4, 8]).map((B) => run('B', B, { BMbps: B }, true)),
  );
  figure(
    {
      id: 'fig10',
      title: 'unavailability vs volatile node bandwidth b (seed Fig. 10)',
      xlabel: 'volatile node repair bandwidth b (Mbps)',
      metric: 'unavailability',
      what: 'object unavailability as b grows, B = 1 Mbps, n = 3',
    },
    () => (quick ? [1, 4] : [1, 2, 4, 8]).map((b) => run('b', b, { bMbps: b }, true)),
  );
  figure(
    {
      id: 'fig12',
      title: 'unavailability vs replication level n (seed Fig. 12)',
      xlabel: 'replication level n',
      metric: 'unavailability',
      what: 'object unavailability as n grows, b = 2 Mbps, B = 1 Mbps',
    },
    () => (quick ? [2, 3] : [2, 3, 4, 5]).map((n) => run('n', n, { n }, true)),
  );
  figure(
    {
      id: 'fig14',
      title: 'unavailability per placement scheme (seed Fig. 14)',
      xlabel: 'placement scheme (1 random, 2 most disk space, 3 least transfers count)',
      metric: 'unavailability',
      what: 'average unavailability for the three replica placement schemes, n = 3',
    },
    () =>
      /** @type {const} */ (['random', 'most-space', 'least-transfers']).map((placement, i) =>
        run(placement, i + 1, { placement }, false),
      ),
  );
  return figures;
}

/** Seconds in a year, for callers turning rates around. */
export { YEAR };
