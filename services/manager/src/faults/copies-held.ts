import { donorOf, type Extent } from '@freeloader/protocol';

/**
 * The copies of morsel `morsel` that placement puts on `donor` (usually one; none when the
 * donor does not hold it — a report naming such a copy is refused).
 *
 * @example
 *   copiesHeldBy([{ copy: 0, first: 0, count: 4, unit: 1, phase: 0, donors: ['a', 'b'] }], 'b', 3)
 *   // → [0]  (morsel 3 is on b)
 */
export function copiesHeldBy(extents: readonly Extent[], donor: string, morsel: number): number[] {
  return extents
    .filter((e) => morsel >= e.first && morsel < e.first + e.count && donorOf(e, morsel) === donor)
    .map((e) => e.copy);
}
