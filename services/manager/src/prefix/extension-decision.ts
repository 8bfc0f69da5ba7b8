import { morselCount } from '@freeloader/protocol';

/**
 * Reads that earn a partly cached dataset a longer prefix. Reads are counted with decay (see
 * repositories/read-stats.ts), so the test is "more than EXTEND_MIN_READS − 1": the third read qualifies while
 * the two before it still count for more than one read together (within about a half-life).
 */
export const EXTEND_MIN_READS = 3;

/** What the manager knows when it decides whether to extend a dataset's cached prefix. */
export interface ExtensionInput {
  sizeBytes: number;
  cachedBytes: number;
  morselSize: number;
  /** Decayed read count (repositories/read-stats.ts). */
  readScore: number;
  pinned: boolean;
  /** The dataset has a Range-capable source to import more morsels from. */
  hasSource: boolean;
  /** An extension, import, trim or delete is already under way for it. */
  busy: boolean;
  /** Donated space of the storage donors (bytes). */
  capacityBytes: number;
  /** Used plus actively reserved space (bytes). */
  usedBytes: number;
  /** Fraction of capacity above which eviction starts (eviction.ts). */
  highWatermark: number;
}

export type ExtensionDecision =
  { extend: true; fromBytes: number; toBytes: number } | { extend: false; reason: string };

/**
 * Whether to extend a partly cached dataset's prefix (issue 7, "a dataset read often enough
 * may have its cached prefix extended when space allows"), and to how much. Only free space
 * under the high watermark is used, so an extension never makes the sweep evict; the extended
 * tail is what eviction trims first (it exceeds the model prefix). Pinned datasets are not
 * extended: their bytes can never be evicted, so growing them would shrink the cache for good
 * without anyone asking. The prefix grows by whole morsels, to the whole dataset if room allows.
 *
 * @example decideExtension({ sizeBytes: 20 * MiB, cachedBytes: 6 * MiB, morselSize: MiB,
 *   readScore: 2.9, pinned: false, hasSource: true, busy: false,
 *   capacityBytes: 48 * MiB, usedBytes: 6 * MiB, highWatermark: 0.9 })
 *   // → { extend: true, fromBytes: 6 MiB, toBytes: 20 MiB } (room under 90 %: 37.2 MiB)
 */
export function decideExtension(i: ExtensionInput): ExtensionDecision {
  const total = morselCount(i.sizeBytes, i.morselSize);
  const cached = Math.floor(i.cachedBytes / i.morselSize);
  if (!i.hasSource) return { extend: false, reason: 'no Range-capable source to import from' };
  if (i.cachedBytes >= i.sizeBytes || cached >= total) {
    return { extend: false, reason: 'already cached whole' };
  }
  if (i.pinned) return { extend: false, reason: 'pinned datasets are not grown' };
  if (i.busy) return { extend: false, reason: 'another job is under way for it' };
  if (!(i.readScore > EXTEND_MIN_READS - 1)) {
    return { extend: false, reason: `read ${i.readScore.toFixed(2)} times recently` };
  }
  const room = Math.floor(i.capacityBytes * i.highWatermark) - i.usedBytes;
  const morsels = Math.floor(Math.max(0, room) / i.morselSize);
  if (morsels < 1) return { extend: false, reason: 'no free space under the high watermark' };
  const to = Math.min(total, cached + morsels);
  return {
    extend: true,
    fromBytes: cached * i.morselSize,
    toBytes: Math.min(i.sizeBytes, to * i.morselSize),
  };
}
