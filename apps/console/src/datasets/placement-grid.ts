import { donorsOfMorsel, type Extent } from '@fl-protocol/placement';

/** One cell of the placement map: a run of morsels and the donor of its first one. */
export interface PlacementCell {
  first: number;
  last: number;
  donor: string | null;
}

/**
 * Cells for drawing a placement map of `morsels` morsels in at most `maxCells` cells: one morsel
 * a cell when it fits, else runs of equal length, each coloured by its first morsel's primary
 * donor (null where no extent covers it, e.g. an import not yet placed).
 *
 * @example placementCells(extents, 6, 100) // [{first:0,last:0,donor:A},{first:1,last:1,donor:B},…]
 */
export function placementCells(
  extents: readonly Extent[],
  morsels: number,
  maxCells = 1024,
): PlacementCell[] {
  const per = Math.max(1, Math.ceil(morsels / maxCells));
  const cells: PlacementCell[] = [];
  for (let first = 0; first < morsels; first += per) {
    cells.push({
      first,
      last: Math.min(morsels, first + per) - 1,
      donor: donorsOfMorsel(extents, first)[0] ?? null,
    });
  }
  return cells;
}

/** Morsels each donor holds (every copy counted), for the map's legend. */
export function morselsPerDonor(extents: readonly Extent[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of extents) {
    const n = e.donors.length;
    const stripes = Math.ceil(e.count / e.unit);
    for (let s = 0; s < stripes; s++) {
      const donor = e.donors[(s + e.phase) % n]!;
      const size = Math.min(e.unit, e.count - s * e.unit);
      counts.set(donor, (counts.get(donor) ?? 0) + size);
    }
  }
  return counts;
}
