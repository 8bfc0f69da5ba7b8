import { bytesOverWatermark, planEviction, type CachedDataset } from '@freeloader/striping';
import type { CachedDatasetView, EvictionTotals } from '@freeloader/protocol';
import type { EvictionCause } from '../repositories/evictions.js';
import {
  cachedDatasetRows,
  cacheSpaceOf,
  evictionTotalsOf,
  pendingDeletes,
} from '../repositories/prefix-evictions.js';
import { listSourceStats } from '../repositories/prefix-sources.js';
import { isoOrNull } from '../repositories/rows.js';
import { clientRate } from './client-rates.js';
import type { PrefixDb, PrefixDeps } from './deps.js';
import { prefixFromStats } from './prefix-sizing.js';
import { sourceKey } from './source-key.js';
import { trimDataset, type TrimResult } from './trim-dataset.js';

/** Eviction starts when cache use passes this fraction of the donated space… */
export const HIGH_WATERMARK = envFraction('FREELOADER_CACHE_HIGH_WATERMARK', 0.9);
/** …and stops once use is back under this one. */
export const LOW_WATERMARK = envFraction('FREELOADER_CACHE_LOW_WATERMARK', 0.75);

function envFraction(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 && v <= 1 ? v : fallback;
}

/** Every dataset with a source, its cached part, model prefix, pin and recency. */
export async function cachedDatasets(deps: PrefixDb): Promise<CachedDatasetView[]> {
  return (await cachedWithMorsels(deps)).map(({ morselSize: _, ...view }) => view);
}

/** {@link cachedDatasets} with each dataset's morsel size (what eviction needs to cut it). */
async function cachedWithMorsels(
  deps: PrefixDb,
): Promise<(CachedDatasetView & { morselSize: number })[]> {
  const rows = await cachedDatasetRows(deps.pg);
  const stats = new Map((await listSourceStats(deps.pg)).map((s) => [s.source, s]));
  const rate = await clientRate(deps.pg);
  return rows.map((r) => {
    const key = sourceKey(r.source_uri);
    return {
      id: r.id,
      morselSize: r.morsel_size,
      path: r.path,
      source: key,
      sizeBytes: r.size_bytes,
      cachedBytes: r.cached_bytes,
      // A dataset without a source cannot be patched: all of it is its prefix.
      prefixBytes: key
        ? prefixFromStats(r.size_bytes, r.morsel_size, stats.get(key) ?? null, rate)
        : r.size_bytes,
      pinned: r.pinned,
      lastAccessAt: isoOrNull(r.last_access_at),
      reads: r.read_count,
      ...(r.extending_to !== null ? { extendingToBytes: r.extending_to } : {}),
    };
  });
}

/** Donated space of the storage donors (not revoked, not bandwidth-only) and what is in use. */
export async function cacheSpace(
  deps: PrefixDb,
): Promise<{ capacityBytes: number; usedBytes: number }> {
  return cacheSpaceOf(deps.pg);
}

/**
 * Free at least `needBytes` (seed 002 §4.1): trim over-cached datasets back to their model
 * prefix by LRU, then evict whole prefixes by LRU; pinned datasets are never touched. Returns
 * what was cut (it may be less than asked when everything left is pinned).
 */
export async function evictBytes(
  deps: Pick<PrefixDeps, 'pg' | 'events' | 'log'>,
  needBytes: number,
  cause?: EvictionCause,
): Promise<TrimResult[]> {
  if (!(needBytes > 0)) return [];
  const plan = planEviction(await evictionEntries(deps), needBytes);
  const done: TrimResult[] = [];
  for (const step of plan.steps) {
    const cut = await trimDataset(deps, step.id, step.toBytes, cause);
    if (cut) done.push(cut);
  }
  if (done.length > 0) {
    deps.log.info(
      { need: needBytes, freed: done.reduce((s, c) => s + c.freedBytes, 0), steps: done.length },
      'cache eviction',
    );
  }
  return done;
}

/** What eviction may cut: every ready dataset as the LRU planner sees it, with its morsel size. */
export async function evictionEntries(
  deps: PrefixDb,
): Promise<(CachedDataset & { sizeBytes: number; morselSize: number })[]> {
  return (await cachedWithMorsels(deps)).map((d) => ({
    id: d.id,
    sizeBytes: d.sizeBytes,
    morselSize: d.morselSize,
    cachedBytes: d.cachedBytes,
    prefixBytes: d.prefixBytes,
    lastAccess: Date.parse(d.lastAccessAt ?? '') || 0,
    pinned: d.pinned,
  }));
}

/** Above the high watermark, evict down to the low one. Returns what was cut. */
export async function watermarkSweep(
  deps: Pick<PrefixDeps, 'pg' | 'events' | 'log'>,
): Promise<TrimResult[]> {
  const { capacityBytes, usedBytes } = await cacheSpace(deps);
  return evictBytes(
    deps,
    bytesOverWatermark(usedBytes, capacityBytes, HIGH_WATERMARK, LOW_WATERMARK),
    { reason: 'watermark' },
  );
}

/** Counts and bytes of every trim, eviction and extension so far. */
export async function evictionTotals(deps: PrefixDb): Promise<EvictionTotals> {
  const r = await evictionTotalsOf(deps.pg);
  return {
    trims: r.trims,
    trimmedBytes: r.trimmed,
    evictions: r.evictions,
    evictedBytes: r.evicted,
    extensions: r.extensions,
    extendedBytes: r.extended,
    lastAt: isoOrNull(r.last),
  };
}

/** Wait (bounded) until the delete jobs eviction queued have run, so donors really have room. */
export async function waitForDeletes(
  deps: PrefixDb,
  cuts: readonly Pick<TrimResult, 'datasetId'>[],
  timeoutMs = 15_000,
): Promise<void> {
  const ids = cuts.map((c) => c.datasetId);
  const deadline = Date.now() + timeoutMs;
  while (ids.length > 0 && Date.now() < deadline) {
    if ((await pendingDeletes(deps.pg, ids)) === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
