import { FreeLoaderError, donorsOfMorsel, type Extent } from '@freeloader/protocol';

/**
 * Walk a copy-0 placement morsel by morsel and count what each donor holds, checking that every
 * morsel of [0, morsels) has exactly one donor and nothing lies beyond. O(morsels): for tests and
 * for plans small enough to double-check.
 *
 * @throws FreeLoaderError INTERNAL naming the first morsel that is missing or doubly placed.
 * @example auditCover([{ copy: 0, first: 0, count: 3, unit: 1, phase: 0, donors: ['a', 'b'] }], 3)
 *   // → a: 2, b: 1
 */
export function auditCover(extents: readonly Extent[], morsels: number): Map<string, number> {
  const counted = new Map<string, number>();
  for (let m = 0; m < morsels; m++) {
    const holders = donorsOfMorsel(extents, m);
    if (holders.length !== 1) {
      throw new FreeLoaderError('INTERNAL', `morsel ${m} has ${holders.length} donors`);
    }
    counted.set(holders[0]!, (counted.get(holders[0]!) ?? 0) + 1);
  }
  if (extents.some((e) => e.first + e.count > morsels)) {
    throw new FreeLoaderError('INTERNAL', `an extent reaches past morsel ${morsels - 1}`);
  }
  return counted;
}
