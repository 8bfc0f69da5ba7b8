import { donorsOfMorsel, type Extent } from '@freeloader/protocol';
import { throttleRank } from './candidates.js';
import { chunksOf, unitChunksOf, type Chunk, type Reassignment } from './move-extents.js';

/** A ready dataset with some of its morsels on the donor being relieved. */
export interface HeldDataset {
  id: string;
  morselSize: number;
  extents: Extent[];
  sourceUri: string | null;
}

/** A donor that can take morsels: live, not the one relieved, with its free ledger space. */
export interface Target {
  id: string;
  url: string;
  freeBytes: number;
  throttle?: string;
}

/** One chunk of one dataset going to one target. */
export interface ChunkMove extends Reassignment {
  morsels: number[];
}

export interface DatasetMove {
  datasetId: string;
  morselSize: number;
  chunks: ChunkMove[];
  /** Bytes each target receives (morsels × morselSize, as import reservations count them). */
  bytesPerTarget: Map<string, number>;
}

export interface RelocationPlan {
  moves: DatasetMove[];
  /** Excess bytes no move covers. */
  remainingBytes: number;
  /** Datasets with nothing moved, in the order they would be evicted. */
  unmoved: HeldDataset[];
}

/**
 * Which of donor `from`'s morsels go where so it sheds at least `excessBytes`. Whole datasets
 * are moved (their share on `from`, biggest first) so the donor can drop them outright; each
 * cycle-aligned chunk goes to the best target with room: unthrottled before throttled, a donor
 * not yet holding the dataset before one that does (its reads stay spread), most free first;
 * never a donor that holds another copy of any morsel of the chunk (copies stay on distinct
 * donors).
 *
 * @example planRelocation('a', 4 MiB, [dataset with 8 MiB on a], [{ id: 'x', freeBytes: 100 MiB }])
 *   // → one move of all 8 chunks to x, remainingBytes 0
 */
export function planRelocation(
  from: string,
  excessBytes: number,
  datasets: readonly HeldDataset[],
  targets: readonly Target[],
): RelocationPlan {
  const free = new Map(targets.map((t) => [t.id, t.freeBytes]));
  const withShare = datasets
    .map((d) => ({ d, chunks: chunksOf(d.extents, from) }))
    .map((x) => ({
      ...x,
      share: x.chunks.reduce((s, c) => s + c.morsels.length, 0) * x.d.morselSize,
    }))
    .filter((x) => x.share > 0)
    .sort((a, b) => b.share - a.share || (a.d.id < b.d.id ? -1 : 1));
  let remaining = excessBytes;
  const moves: DatasetMove[] = [];
  const unmoved: HeldDataset[] = [];
  for (const { d, chunks } of withShare) {
    if (remaining <= 0) break;
    const holders = new Set(d.extents.flatMap((e) => e.donors));
    const move: DatasetMove = {
      datasetId: d.id,
      morselSize: d.morselSize,
      chunks: [],
      bytesPerTarget: new Map(),
    };
    const place = (c: Chunk): boolean => {
      const bytes = c.morsels.length * d.morselSize;
      const otherCopies = new Set(c.morsels.flatMap((m) => donorsOfMorsel(d.extents, m)));
      const to = bestTarget(
        targets.filter((t) => !otherCopies.has(t.id)),
        free,
        holders,
        bytes,
      );
      if (!to) return false;
      free.set(to, free.get(to)! - bytes);
      move.chunks.push({ copy: c.copy, first: c.first, count: c.count, to, morsels: c.morsels });
      move.bytesPerTarget.set(to, (move.bytesPerTarget.get(to) ?? 0) + bytes);
      remaining -= bytes;
      return true;
    };
    let units: Chunk[] | undefined;
    for (const c of chunks) {
      if (place(c)) continue;
      // Declustered copies: a chunk of whole cycles has its other copies on every donor; one
      // stripe unit at a time has them on n − 1.
      units ??= unitChunksOf(d.extents, from);
      for (const u of units) {
        if (u.copy === c.copy && u.first >= c.first && u.first < c.first + c.count) place(u);
      }
    }
    if (move.chunks.length > 0) moves.push(move);
    else unmoved.push(d);
  }
  return { moves, remainingBytes: Math.max(0, remaining), unmoved };
}

function bestTarget(
  targets: readonly Target[],
  free: Map<string, number>,
  holders: Set<string>,
  bytes: number,
): string | undefined {
  const fits = targets.filter((t) => free.get(t.id)! >= bytes);
  fits.sort(
    (a, b) =>
      throttleRank(a.throttle) - throttleRank(b.throttle) ||
      Number(holders.has(a.id)) - Number(holders.has(b.id)) ||
      free.get(b.id)! - free.get(a.id)! ||
      (a.id < b.id ? -1 : 1),
  );
  return fits[0]?.id;
}
