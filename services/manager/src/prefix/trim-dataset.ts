import type pg from 'pg';
import { donorOf, morselLength, type Extent } from '@freeloader/protocol';
import { withTransaction, type Queryable } from '../db/pool.js';
import { recordCut, type EvictionCause } from '../repositories/evictions.js';
import { enqueueJob } from '../repositories/jobs.js';
import { getPlacement, setPlacement } from '../repositories/placement.js';
import {
  decreaseUsedBytes,
  lockAgents,
  lockCommittedReservations,
  lockDatasetForTrim,
  releaseReservation,
  setCachedBytes,
  shrinkReservation,
} from '../repositories/prefix-trims.js';
import { abandonExtensionIn } from './abandon-extension.js';
import type { PrefixDeps } from './deps.js';

export interface TrimResult {
  datasetId: string;
  kind: 'trim' | 'evict';
  fromBytes: number;
  toBytes: number;
  freedBytes: number;
  /** Bytes each donor gives back. */
  perDonor: Map<string, number>;
}

/**
 * Extents clipped to morsels [0, keep): a clipped extent keeps its unit, phase and donors, so
 * every morsel that stays keeps its donor. Also returns the bytes each donor loses.
 *
 * @example clipExtents([{copy:0,first:0,count:4,unit:1,phase:0,donors:['a','b']}], 3, 4 * M, M)
 *   // → extents [{…count:3}], freed { b: M }
 */
export function clipExtents(
  extents: readonly Extent[],
  keep: number,
  sizeBytes: number,
  morselSize: number,
): { extents: Extent[]; freed: Map<string, number> } {
  const freed = new Map<string, number>();
  const kept: Extent[] = [];
  for (const e of extents) {
    for (let m = Math.max(e.first, keep); m < e.first + e.count; m++) {
      const donor = donorOf(e, m);
      freed.set(donor, (freed.get(donor) ?? 0) + morselLength(sizeBytes, morselSize, m));
    }
    const count = Math.min(e.count, keep - e.first);
    if (count > 0) kept.push({ ...e, count });
  }
  return { extents: kept, freed };
}

/** Take `bytes` out of a donor's committed reservations for a dataset and its used space. */
async function giveBack(tx: Queryable, agentId: string, datasetId: string, bytes: number) {
  const rows = await lockCommittedReservations(tx, agentId, datasetId);
  let left = bytes;
  for (const r of rows) {
    if (left <= 0) break;
    if (r.bytes <= left) {
      await releaseReservation(tx, r.id);
      left -= r.bytes;
    } else {
      await shrinkReservation(tx, r.id, left);
      left = 0;
    }
  }
  await decreaseUsedBytes(tx, agentId, bytes - left);
}

/**
 * Cut a ready dataset's cached part back to `toBytes` (whole morsels; 0 evicts the whole
 * prefix), from the tail: placement shrinks, the donors' reservations and used space give the
 * bytes back, `cached_bytes` drops, the cut is recorded, and each donor gets a delete job for
 * its morsels from the cut on. Morsel hashes stay: they verify later patches of the same bytes.
 * Returns null when there is nothing to cut (gone, pinned, not ready, or already short enough).
 * `cause` (why, for which import) goes into the eviction log.
 */
export async function trimDataset(
  deps: Pick<PrefixDeps, 'pg' | 'events'>,
  datasetId: string,
  toBytes: number,
  cause?: EvictionCause,
): Promise<TrimResult | null> {
  const result = await withTransaction(deps.pg, (tx) =>
    trimDatasetIn(tx, datasetId, toBytes, cause),
  );
  if (result) deps.events.publish({ type: 'dataset', datasetId, state: 'ready' });
  return result;
}

/** {@link trimDataset} inside the caller's transaction; the caller publishes the change. */
export async function trimDatasetIn(
  tx: pg.PoolClient,
  datasetId: string,
  toBytes: number,
  cause?: EvictionCause,
): Promise<TrimResult | null> {
  const d = await lockDatasetForTrim(tx, datasetId);
  if (!d || d.state !== 'ready' || d.pinned || d.cached_bytes <= toBytes) return null;
  // The cache needs the space: an extension in flight would only grow what is being cut.
  await abandonExtensionIn(tx, datasetId);
  const keep = Math.floor(Math.max(0, toBytes) / d.morsel_size);
  const target = Math.min(d.size_bytes, keep * d.morsel_size);
  const { extents, freed } = clipExtents(
    await getPlacement(tx, datasetId),
    keep,
    d.size_bytes,
    d.morsel_size,
  );
  // Agents in id order, as `reserve` locks an agent before any of its reservations.
  const donors = [...freed.keys()].sort();
  await lockAgents(tx, donors);
  for (const donor of donors) await giveBack(tx, donor, datasetId, freed.get(donor)!);
  await setPlacement(tx, datasetId, extents);
  await setCachedBytes(tx, datasetId, target);
  const kind = target === 0 ? ('evict' as const) : ('trim' as const);
  const freedBytes = d.cached_bytes - target;
  await recordCut(tx, { datasetId, kind, bytes: freedBytes }, cause);
  for (const donor of donors) {
    await enqueueJob(tx, {
      kind: 'delete',
      datasetId,
      agentId: donor,
      payload: keep === 0 ? { datasetId } : { datasetId, fromMorsel: keep },
    });
  }
  return {
    datasetId,
    kind,
    fromBytes: d.cached_bytes,
    toBytes: target,
    freedBytes,
    perDonor: freed,
  };
}
