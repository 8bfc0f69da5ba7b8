import { planEviction } from '@freeloader/striping';

/**
 * Replay an access trace through FreeLoader's prefix cache policy (seed 002 §4.1, the same
 * `planEviction` the manager runs) and count hits. Every dataset's wanted prefix is
 * `ratio × size` (seed Fig. 6 applies one ratio to all). A miss imports the dataset: whole when
 * it fits in the free space, else its prefix after eviction (trims of over-cached datasets by
 * LRU, then whole prefixes by LRU). An access finding at least the wanted prefix cached is a
 * hit: the rest is patched while the prefix is read. Ratio 1.0 is classic whole-dataset caching.
 *
 * @param {{ sizes: number[], accesses: number[] }} trace
 * @param {number} capacity cache bytes
 * @param {number} ratio wanted prefix / size, in (0, 1]
 * @returns {{ hits: number, accesses: number, hitRate: number, trims: number, evictions: number }}
 * @example simulatePrefixCache(syntheticTrace(), 500e9, 0.4).hitRate
 */
export function simulatePrefixCache(trace, capacity, ratio) {
  /** @type {Map<number, { cached: number, last: number }>} */
  const cache = new Map();
  let used = 0;
  let hits = 0;
  let trims = 0;
  let evictions = 0;
  const want = (/** @type {number} */ d) =>
    Math.min(
      /** @type {number} */ (trace.sizes[d]),
      Math.ceil(ratio * /** @type {number} */ (trace.sizes[d])),
    );
  trace.accesses.forEach((d, step) => {
    const size = /** @type {number} */ (trace.sizes[d]);
    const entry = cache.get(d);
    if (entry && entry.cached >= want(d)) {
      hits++;
      entry.last = step;
      return;
    }
    // Miss: import (a dataset cached shorter than wanted is imported again, up to what is wanted).
    if (entry) {
      used -= entry.cached;
      cache.delete(d);
    }
    let target = size;
    if (size > capacity - used) {
      target = want(d);
      if (target > capacity) return; // can never be cached
      const plan = planEviction(
        [...cache].map(([id, e]) => ({
          id: String(id),
          cachedBytes: e.cached,
          prefixBytes: want(id),
          lastAccess: e.last,
        })),
        target - (capacity - used),
      );
      for (const s of plan.steps) {
        const id = Number(s.id);
        const e = /** @type {{ cached: number, last: number }} */ (cache.get(id));
        used -= s.freedBytes;
        e.cached = s.toBytes;
        if (s.kind === 'trim') trims++;
        else evictions++;
        if (e.cached === 0) cache.delete(id);
      }
    }
    cache.set(d, { cached: target, last: step });
    used += target;
  });
  const n = trace.accesses.length;
  return { hits, accesses: n, hitRate: n ? hits / n : 0, trims, evictions };
}
