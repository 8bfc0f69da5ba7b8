import type { DatasetHealth, Extent } from '@freeloader/protocol';

/** A copy known bad on its donor (a `morsel_faults` row): it does not count as live. */
export interface CopyFault {
  copy: number;
  morsel: number;
}

export interface HealthInput {
  /** Every copy's extents. */
  extents: readonly Extent[];
  /** Copies wanted (the dataset's n). */
  wanted: number;
  /** Whether a donor is live now (soft state). */
  live: (donor: string) => boolean;
  faults?: readonly CopyFault[];
}

/**
 * A dataset's replication health over its placed morsels (those the extents cover: the whole
 * dataset, or the cached prefix): live copies per morsel (a copy on a live donor with no fault
 * recorded), their minimum and mean, the morsels with fewer live copies than wanted (at risk)
 * and those with none (only at the source). The one place the manager computes it: the dataset
 * views, `stat`, `ls` and the console show this. O(placed morsels + stripe units).
 *
 * @example
 *   // 4 morsels, copy 0 on a,b and copy 1 on b,a; b is dead:
 *   datasetHealth({ wanted: 2, live: (d) => d === 'a', extents: [
 *     { copy: 0, first: 0, count: 4, unit: 1, phase: 0, donors: ['a', 'b'] },
 *     { copy: 1, first: 0, count: 4, unit: 1, phase: 0, donors: ['b', 'a'] }] });
 *   // → { wanted: 2, morsels: 4, liveMin: 1, liveAvg: 1, atRisk: 4, sourceOnly: 0 }
 */
export function datasetHealth(input: HealthInput): DatasetHealth {
  const { extents, wanted, live, faults = [] } = input;
  const morsels = extents.reduce((n, e) => Math.max(n, e.first + e.count), 0);
  const counts = new Uint8Array(morsels);
  for (const e of extents) {
    for (let b = 0; b * e.unit < e.count; b++) {
      if (!live(e.donors[(b + e.phase) % e.donors.length]!)) continue;
      const from = e.first + b * e.unit;
      const to = Math.min(e.first + e.count, from + e.unit);
      for (let m = from; m < to; m++) counts[m]!++;
    }
  }
  for (const f of faults) {
    const e = extents.find(
      (x) => x.copy === f.copy && f.morsel >= x.first && f.morsel < x.first + x.count,
    );
    if (!e) continue;
    const donor =
      e.donors[(Math.floor((f.morsel - e.first) / e.unit) + e.phase) % e.donors.length]!;
    if (live(donor) && counts[f.morsel]! > 0) counts[f.morsel]!--;
  }
  let min = morsels > 0 ? Infinity : 0;
  let sum = 0;
  let atRisk = 0;
  let sourceOnly = 0;
  for (const c of counts) {
    if (c < min) min = c;
    sum += c;
    if (c < wanted) atRisk++;
    if (c === 0) sourceOnly++;
  }
  return {
    wanted,
    morsels,
    liveMin: min,
    liveAvg: morsels > 0 ? Math.round((sum / morsels) * 100) / 100 : 0,
    atRisk,
    sourceOnly,
  };
}
