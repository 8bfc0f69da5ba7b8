/** A donor repair may write to, as the scheduler sees it at this tick. */
export interface RepairCandidate {
  id: string;
  /** quota − used − active reservations (bytes). */
  freeBytes: number;
  /** Repair jobs this donor has taken part in (destination or source): least-transfers-count. */
  transfers: number;
}

/**
 * Pick where a unit of repair goes: ThriftStore's best scheme, least-transfers-count, among
 * donors with room for `bytes` that hold none of the unit's morsels in any copy (two copies of a
 * morsel never share a donor) and are not excluded (busy with another repair: the per-donor cap b
 * allows one at a time; departing; owing a delete of this dataset). Ties go to the most free
 * space, then the smaller id (deterministic). Undefined when nobody fits.
 *
 * @example
 *   pickRepairDestination(
 *     [{ id: 'a', freeBytes: 9, transfers: 3 }, { id: 'b', freeBytes: 5, transfers: 1 }],
 *     4, new Set(), new Set())   // → 'b' (fewest transfers)
 */
export function pickRepairDestination(
  candidates: readonly RepairCandidate[],
  bytes: number,
  holders: ReadonlySet<string>,
  excluded: ReadonlySet<string>,
): string | undefined {
  let best: RepairCandidate | undefined;
  for (const c of candidates) {
    if (c.freeBytes < bytes || holders.has(c.id) || excluded.has(c.id)) continue;
    if (
      !best ||
      c.transfers < best.transfers ||
      (c.transfers === best.transfers &&
        (c.freeBytes > best.freeBytes || (c.freeBytes === best.freeBytes && c.id < best.id)))
    ) {
      best = c;
    }
  }
  return best?.id;
}
