/**
 * Cache replacement for prefix caching (seed 002 §4.1): LRU, extended so that datasets are
 * evicted from their tail. First, datasets whose cached part exceeds the prefix the model asks
 * for are trimmed back to that prefix, least recently used first; only when no such dataset is
 * left are whole cached prefixes evicted, again least recently used first. Pinned datasets are
 * never touched. A dataset evicted to nothing stays readable: its whole content is patched.
 */

export interface CachedDataset {
  id: string;
  /** Bytes of the dataset cached now (a prefix; whole morsels unless the whole dataset). */
  cachedBytes: number;
  /** The prefix the model asks for now (bytes; rounded to whole morsels by the caller). */
  prefixBytes: number;
  /** Last access (any monotone number: ms since the epoch, a trace step); smaller is older. */
  lastAccess: number;
  pinned?: boolean;
}

export interface EvictionStep {
  id: string;
  /** `trim`: cut the tail back to the model prefix; `evict`: drop the cached prefix entirely. */
  kind: 'trim' | 'evict';
  fromBytes: number;
  toBytes: number;
  freedBytes: number;
}

export interface EvictionPlan {
  steps: EvictionStep[];
  freedBytes: number;
  /** True when the plan frees at least the bytes asked for. */
  enough: boolean;
}

/**
 * Choose what to cut to free `needBytes`, in the seed's order: trims of over-cached datasets by
 * LRU, then whole evictions by LRU. Ties in `lastAccess` break by id so plans are deterministic.
 * A dataset trimmed in the first phase may be evicted whole in the second (one step per phase).
 *
 * @example
 *   planEviction([{ id: 'a', cachedBytes: 100, prefixBytes: 30, lastAccess: 1 }], 50)
 *   // → { steps: [{ id: 'a', kind: 'trim', fromBytes: 100, toBytes: 30, freedBytes: 70 }], freedBytes: 70, enough: true }
 */
export function planEviction(datasets: readonly CachedDataset[], needBytes: number): EvictionPlan {
  const steps: EvictionStep[] = [];
  let freed = 0;
  if (!(needBytes > 0)) return { steps, freedBytes: 0, enough: true };
  const lru = datasets
    .filter((d) => !d.pinned && d.cachedBytes > 0)
    .sort((a, b) => a.lastAccess - b.lastAccess || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const cached = new Map(lru.map((d) => [d.id, d.cachedBytes]));

  for (const d of lru) {
    if (freed >= needBytes) break;
    const target = Math.max(0, d.prefixBytes);
    if (d.cachedBytes <= target) continue;
    const step = { id: d.id, kind: 'trim' as const, fromBytes: d.cachedBytes, toBytes: target };
    steps.push({ ...step, freedBytes: d.cachedBytes - target });
    freed += d.cachedBytes - target;
    cached.set(d.id, target);
  }
  for (const d of lru) {
    if (freed >= needBytes) break;
    const now = cached.get(d.id)!;
    if (now <= 0) continue;
    steps.push({ id: d.id, kind: 'evict', fromBytes: now, toBytes: 0, freedBytes: now });
    freed += now;
    cached.set(d.id, 0);
  }
  return { steps, freedBytes: freed, enough: freed >= needBytes };
}

/**
 * Bytes to free so that use drops to the low watermark, or 0 while use is at or below the high
 * one (hysteresis: eviction starts at `high` and stops at `low`).
 *
 * @example bytesOverWatermark(95, 100, 0.9, 0.75) // → 20
 */
export function bytesOverWatermark(
  usedBytes: number,
  capacityBytes: number,
  high: number,
  low: number,
): number {
  if (!(capacityBytes > 0) || usedBytes <= high * capacityBytes) return 0;
  return Math.max(0, Math.ceil(usedBytes - low * capacityBytes));
}
