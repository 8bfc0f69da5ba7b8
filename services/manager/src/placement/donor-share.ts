import type { Extent } from '@freeloader/protocol';

/**
 * Every donor's share of a plan's extents, in one pass (each list in plan order). A ranged
 * import job carries only its donor's share: it fetches its own morsels from the source by
 * Range and never talks to the other donors, so its size depends on what that donor holds, not
 * on how many donors the import uses (carrying every extent and donor to every donor grew with
 * the square of the donors: ~200 MB of job payloads for 1 TiB on 1 GiB donors). The extents keep
 * their `donors` lists (at most the stripe width): a donor's morsels follow from its slot there.
 * One pass, because searching all extents once per donor made the payloads cost donors × extents.
 *
 * @example extentsByDonor([{ donors: ['a','b'], … }, { donors: ['b'], … }])
 *   // → Map { a → [first], b → [first, second] }
 */
export function extentsByDonor(extents: readonly Extent[]): Map<string, Extent[]> {
  const out = new Map<string, Extent[]>();
  for (const e of extents) {
    for (const d of new Set(e.donors)) {
      const list = out.get(d);
      if (list) list.push(e);
      else out.set(d, [e]);
    }
  }
  return out;
}
