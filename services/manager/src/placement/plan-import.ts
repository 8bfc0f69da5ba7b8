import {
  FreeLoaderError,
  MORSEL_SIZE,
  formatSize,
  morselCount,
  type Extent,
  type ImportRequest,
} from '@freeloader/protocol';
import { placeRoundRobin } from '@freeloader/striping';
import type { Candidate } from './candidates.js';

/** Default stripe width when the request names none: wide enough to beat one source stream. */
export const DEFAULT_STRIPE_WIDTH = 8;

export interface ImportPlan {
  morselSize: number;
  morsels: number;
  width: number;
  unit: number;
  extents: Extent[];
  /** Bytes to reserve on each donor. */
  bytesPerDonor: Map<string, number>;
}

/**
 * Greedy round-robin placement (seed 000 §4.1.2) of a `size`-byte dataset over live donors.
 * Throws NO_DONORS when nobody can take data, NO_SPACE when the whole cache cannot hold it.
 *
 * @example planImport(3 MiB, {}, [{id:'a',freeBytes:2 MiB},{id:'b',freeBytes:2 MiB}])
 *   // → width 2, extents [{first:0,count:3,unit:1,donors:['a','b']}], a: 2 MiB, b: 1 MiB
 */
export function planImport(
  size: number,
  req: Pick<ImportRequest, 'width' | 'stripeSize' | 'morselSize'>,
  candidates: Candidate[],
): ImportPlan {
  const morselSize = req.morselSize ?? MORSEL_SIZE;
  const morsels = morselCount(size, morselSize);
  const unit = req.stripeSize ?? 1;
  if (candidates.length === 0) {
    throw new FreeLoaderError(
      'NO_DONORS',
      'no live donor can store data right now; start or enroll an agent',
    );
  }
  const width = Math.min(req.width ?? DEFAULT_STRIPE_WIDTH, candidates.length);
  if (morsels === 0) {
    return { morselSize, morsels, width, unit, extents: [], bytesPerDonor: new Map() };
  }
  const placed = withCacheFullMessage(size, candidates, () =>
    placeRoundRobin({
      morsels,
      width,
      unit,
      donors: candidates.map((c) => ({
        id: c.id,
        freeMorsels: Math.floor(c.freeBytes / morselSize),
      })),
    }),
  );
  const bytesPerDonor = new Map([...placed.perDonor].map(([id, n]) => [id, n * morselSize]));
  return { morselSize, morsels, width, unit, extents: placed.extents, bytesPerDonor };
}

/**
 * Run a placement; a NO_SPACE from it is restated for the whole cache (what the user can act on)
 * instead of for the algorithm's inputs.
 *
 * @example withCacheFullMessage(2 ** 30, candidates, () => placeRoundRobin(…))
 */
export function withCacheFullMessage<T>(size: number, candidates: Candidate[], place: () => T): T {
  try {
    return place();
  } catch (e) {
    if (e instanceof FreeLoaderError && e.code === 'NO_SPACE') {
      const free = candidates.reduce((s, c) => s + c.freeBytes, 0);
      throw new FreeLoaderError(
        'NO_SPACE',
        `the cache cannot hold ${formatSize(size)}: ${formatSize(free)} free on ${candidates.length} live donor(s)`,
        { neededBytes: size, freeBytes: free },
      );
    }
    throw e;
  }
}
