import type { Extent, ImportJobPayload } from '@freeloader/protocol';

/**
 * The part of a ranged import payload one donor needs: only the extents that name it (it fetches
 * its own morsels from the source by Range and never talks to the other donors), and only its own
 * endpoint. A job's size then depends on what that donor holds, not on how many donors the
 * import uses: carrying every extent and donor to every donor grew with the square of the donors
 * (~200 MB of job payloads for 1 TiB on 1 GiB donors).
 *
 * The extents keep their `donors` lists (at most the stripe width) because a donor's morsels
 * within an extent follow from its slot in that list.
 *
 * @example donorShare({ …, extents: [{ donors: ['a','b'], … }, { donors: ['c'], … }],
 *   donors: [a, b, c] }, 'a') // → extents [{ donors: ['a','b'], … }], donors [a]
 */
export function donorShare(payload: ImportJobPayload, agentId: string): ImportJobPayload {
  return {
    ...payload,
    extents: extentsOfDonor(payload.extents, agentId),
    donors: payload.donors.filter((d) => d.id === agentId),
  };
}

/**
 * The extents naming `agentId` among their donors.
 *
 * @example extentsOfDonor([{ donors: ['a','b'], … }, { donors: ['c'], … }], 'b') // → the first
 */
export function extentsOfDonor(extents: readonly Extent[], agentId: string): Extent[] {
  return extents.filter((e) => e.donors.includes(agentId));
}
