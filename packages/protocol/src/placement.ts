/**
 * Placement is stored as extents (stripe descriptors), not per-morsel rows, so a 1 TiB
 * dataset is a handful of rows. An extent covers morsels [first, first + count) of one copy:
 * morsel m lives on donors[(floor((m - first) / unit) + phase) mod donors.length].
 * `unit` is the stripe size in morsels; `phase` lets an extent be split (to move one morsel to
 * another donor) without changing where the remaining morsels live.
 * A donor may be listed more than once: then it holds that many slots of every cycle. The
 * predictive and asymmetric policies stripe unevenly this way (e.g. a host listed 3 times among
 * 8 remote donors is the seed's 3:8 local:remote ratio) with `donorOf` unchanged.
 *
 * @example
 *   // 10 morsels over donors A,B,C one morsel at a time:
 *   // {first:0,count:10,unit:1,phase:0,donors:[A,B,C]} → 0:A 1:B 2:C 3:A …
 */
export interface Extent {
  /** Replica number: 0 is the primary copy; replication adds 1, 2, … */
  copy: number;
  first: number;
  count: number;
  /** Stripe size in morsels (consecutive morsels per donor before moving on). */
  unit: number;
  phase: number;
  donors: string[];
}

/** The donor of morsel `m` within an extent; throws when `m` is outside it. */
export function donorOf(extent: Extent, m: number): string {
  if (m < extent.first || m >= extent.first + extent.count) {
    throw new RangeError(
      `morsel ${m} outside extent [${extent.first}, ${extent.first + extent.count})`,
    );
  }
  const slot = (Math.floor((m - extent.first) / extent.unit) + extent.phase) % extent.donors.length;
  return extent.donors[slot]!;
}

/** Every donor holding morsel `m`, primary copy first. */
export function donorsOfMorsel(extents: readonly Extent[], m: number): string[] {
  return extents
    .filter((e) => m >= e.first && m < e.first + e.count)
    .sort((a, b) => a.copy - b.copy)
    .map((e) => donorOf(e, m));
}

/** The morsel indices an extent assigns to one donor, ascending. */
export function morselsOfDonor(extent: Extent, donor: string): number[] {
  const out: number[] = [];
  for (let m = extent.first; m < extent.first + extent.count; m++) {
    if (donorOf(extent, m) === donor) out.push(m);
  }
  return out;
}

/** Number of morsels of a dataset of `size` bytes. */
export function morselCount(size: number, morselSize: number): number {
  return Math.ceil(size / morselSize);
}

/** Byte length of morsel `m` (the last one may be short). */
export function morselLength(size: number, morselSize: number, m: number): number {
  return Math.max(0, Math.min(morselSize, size - m * morselSize));
}
