import type { CacheStatus } from '@freeloader/protocol';
import type { EvictionCause } from '../repositories/evictions.js';
import { setPinned } from '../repositories/prefix-evictions.js';
import type { PrefixDeps } from './deps.js';
import {
  cacheSpace,
  cachedDatasets,
  evictionTotals,
  HIGH_WATERMARK,
  LOW_WATERMARK,
} from './eviction.js';
import { trimDataset, type TrimResult } from './trim-dataset.js';

/**
 * What users and admins do to the cache by hand (status, pins, cuts), bound to the deps once so
 * the routes hand over nothing but request values.
 *
 * @example await app.prefixCache.cache.pin(datasetId, true) // → false when there is no such dataset
 */
export function createCacheAdmin(deps: Pick<PrefixDeps, 'pg' | 'events'>) {
  return {
    /** Cache space, watermarks, eviction counts, and every dataset with its model prefix. */
    async status(): Promise<CacheStatus> {
      return {
        ...(await cacheSpace(deps)),
        highWatermark: HIGH_WATERMARK,
        lowWatermark: LOW_WATERMARK,
        evictions: await evictionTotals(deps),
        datasets: await cachedDatasets(deps),
      };
    },

    /** Pin a dataset (never evicted) or unpin it; false when there is no such dataset. */
    pin: (datasetId: string, pinned: boolean): Promise<boolean> =>
      setPinned(deps.pg, datasetId, pinned),

    /** Cut a ready dataset's cached part back to `toBytes` (see {@link trimDataset}). */
    trim: (datasetId: string, toBytes: number, cause?: EvictionCause): Promise<TrimResult | null> =>
      trimDataset(deps, datasetId, toBytes, cause),
  };
}
export type CacheAdmin = ReturnType<typeof createCacheAdmin>;
