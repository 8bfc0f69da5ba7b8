/**
 * Seeded pseudo-random numbers for the availability simulator: one seed gives one trace, so a
 * run (and a test) is reproducible. mulberry32 is small and good enough for Monte Carlo at this
 * scale; the samplers turn its uniforms into the failure-time distributions of seed 003 §4.3.
 */

/**
 * @typedef {object} Random
 * @property {() => number} next uniform in [0, 1)
 * @property {(n: number) => number} int uniform integer in [0, n)
 * @property {(mean: number) => number} exponential
 * @property {(shape: number, scale: number) => number} weibull
 */

/**
 * @param {number} seed any 32-bit integer
 * @returns {Random}
 * @example const r = seededRandom(1); r.weibull(0.49, 10 * 86400); // seconds to a failure
 */
export function seededRandom(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  // 1 - u is in (0, 1]: never log(0).
  const tail = () => -Math.log(1 - next());
  return {
    next,
    int: (n) => Math.floor(next() * n),
    exponential: (mean) => mean * tail(),
    weibull: (shape, scale) => scale * tail() ** (1 / shape),
  };
}

/**
 * Γ(x) for x > 0 (Lanczos), to state a Weibull's mean: scale · Γ(1 + 1/shape).
 *
 * @param {number} x
 * @returns {number}
 * @example weibullMean(0.49, 10) // ≈ 20.8 (seed 003: "node MTTF is 20 days")
 */
export function gamma(x) {
  if (x < 0.5) return Math.PI / (Math.sin(Math.PI * x) * gamma(1 - x));
  const g = 7;
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7,
  ];
  const y = x - 1;
  let s = c[0] ?? 0;
  for (let i = 1; i < g + 2; i++) s += (c[i] ?? 0) / (y + i);
  const t = y + g + 0.5;
  return Math.sqrt(2 * Math.PI) * t ** (y + 0.5) * Math.exp(-t) * s;
}

/**
 * @param {number} shape
 * @param {number} scale
 * @returns {number}
 */
export function weibullMean(shape, scale) {
  return scale * gamma(1 + 1 / shape);
}
