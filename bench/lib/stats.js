/**
 * Median of a non-empty list (the mean of the middle two for even lengths).
 *
 * @param {number[]} xs
 * @returns {number}
 * @example median([3, 1, 2]) // 2
 */
export function median(xs) {
  if (xs.length === 0) throw new Error('median of nothing');
  const s = [...xs].sort((a, b) => a - b);
  const at = (/** @type {number} */ i) => /** @type {number} */ (s[i]);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
}

/**
 * Call `measure` `n` times in a row (never in parallel: they would share links and cores) and
 * return the median and the samples.
 *
 * @param {number} n
 * @param {() => Promise<number>} measure
 * @returns {Promise<{ median: number, samples: number[] }>}
 */
export async function repeat(n, measure) {
  const samples = [];
  for (let i = 0; i < n; i++) samples.push(await measure());
  return { median: median(samples), samples };
}
