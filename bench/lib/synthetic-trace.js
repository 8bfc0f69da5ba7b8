/**
 * A synthetic dataset access trace with the shape of the JASMine trace seed 002 §5.4 used
 * (filtered to datasets of at least 2 GB: 4000 accesses to 1686 datasets over 19.1 days).
 * The real trace is not public, so this one is generated: skewed (Zipf) popularity, plus the
 * temporal locality the seed describes — scientists return to datasets they fetched recently.
 * Deterministic for a given seed. It is synthetic: figures drawn from it say so.
 */

/**
 * @typedef {object} TraceOptions
 * @property {number} [datasets] distinct datasets, each accessed at least once (default 1686)
 * @property {number} [accesses] trace length (default 4000)
 * @property {number} [zipf] popularity skew exponent (default 0.9)
 * @property {number} [reuse] share of revisits that go to a recent dataset, not a popular one (default 0.5)
 * @property {number} [seed] PRNG seed (default 42)
 */

/**
 * @typedef {object} Trace
 * @property {number[]} sizes bytes per dataset (≥ 2 GB, heavy-tailed, median ≈ 3.5 GB)
 * @property {number[]} accesses dataset index per access, in time order
 */

/**
 * mulberry32: a tiny deterministic PRNG in [0, 1).
 *
 * @param {number} seed
 * @returns {() => number}
 */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Generate the trace.
 *
 * @param {TraceOptions} [opts]
 * @returns {Trace}
 * @example const t = syntheticTrace({ seed: 1 }); t.accesses.length // 4000
 */
export function syntheticTrace(opts = {}) {
  const n = opts.datasets ?? 1686;
  const len = opts.accesses ?? 4000;
  const rand = prng(opts.seed ?? 42);
  // Sizes: 2 GB plus a log-normal tail (most a few GB, some tens of GB).
  const sizes = Array.from({ length: n }, () => {
    const z = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    return Math.round(2e9 + Math.exp(21.2 + 1.1 * z));
  });
  // Zipf popularity over a random permutation (size and popularity independent).
  const s = opts.zipf ?? 0.9;
  const weights = Array.from({ length: n }, (_, i) => 1 / (i + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  /** @type {number[]} */
  const cdf = [];
  let acc = 0;
  for (const w of weights) cdf.push((acc += w / total));
  const perm = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [perm[i], perm[j]] = [/** @type {number} */ (perm[j]), /** @type {number} */ (perm[i])];
  }
  const pick = () => {
    const u = rand();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (/** @type {number} */ (cdf[mid]) < u) lo = mid + 1;
      else hi = mid;
    }
    return /** @type {number} */ (perm[lo]);
  };
  // Every dataset is accessed at least once (the trace's ~1700 are the ones it touches);
  // first accesses are spread uniformly over time, and the rest are revisits — of a recent
  // dataset (temporal locality) or of a popular one (skew).
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [/** @type {number} */ (order[j]), /** @type {number} */ (order[i])];
  }
  /** @type {number[]} */
  const accesses = [];
  const seen = new Set();
  const reuse = opts.reuse ?? 0.5;
  let next = 0;
  for (let i = 0; i < len; i++) {
    const newLeft = n - next;
    if (next < n && (accesses.length === 0 || rand() < newLeft / (len - i))) {
      const d = /** @type {number} */ (order[next++]);
      seen.add(d);
      accesses.push(d);
      continue;
    }
    let d = -1;
    if (rand() >= reuse) {
      for (let tries = 0; tries < 50 && d < 0; tries++) {
        const c = pick();
        if (seen.has(c)) d = c;
      }
    }
    if (d < 0) {
      const back = Math.min(accesses.length, 1 + Math.floor(-Math.log(1 - rand()) * 20));
      d = /** @type {number} */ (accesses[accesses.length - back]);
    }
    accesses.push(d);
  }
  return { sizes, accesses };
}
