import { FreeLoaderError, type ImportRequest } from '@freeloader/protocol';
import { placeReplicas } from '@freeloader/striping';
import type { Candidate } from './candidates.js';
import { planPlacement, type PolicyPlan } from './choose-policy.js';
import type { PlacementDeps } from './placement-deps.js';

/** A policy plan with every copy placed: extents of all copies, bytes per donor over all. */
export interface CopiesPlan extends PolicyPlan {
  /** Copies wanted (n). */
  wanted: number;
  /** Copies placed: < wanted when too few distinct donors have room (the dataset is under-replicated). */
  copies: number;
}

/**
 * Place `wanted` copies of an import: copy 0 by the chosen policy on candidates whose free space
 * is divided by the copies tried (so room is left for the others), then copies 1…n−1 by
 * {@link placeReplicas} on the space left, never two copies of a morsel on one donor. With fewer
 * distinct donors (or less room) than n copies, fewer copies are placed (≥ 1): an import one copy
 * could hold never fails for want of the others; repair tops it up later.
 *
 * @throws FreeLoaderError as {@link planPlacement}: NO_DONORS, NO_SPACE (not even one copy fits).
 * @example await planCopies(app, 10 << 20, { replicas: 2 }, candidates, 'alice', 2) // copies 2
 */
export async function planCopies(
  deps: PlacementDeps,
  size: number,
  req: ImportRequest,
  candidates: Candidate[],
  who: string,
  wanted: number,
): Promise<CopiesPlan> {
  for (let k = Math.max(1, Math.min(wanted, candidates.length)); ; k--) {
    const share = candidates.map((c) => ({ ...c, freeBytes: Math.floor(c.freeBytes / k) }));
    let primary: PolicyPlan;
    try {
      primary = await planPlacement(deps, size, req, share, who);
    } catch (e) {
      if (k > 1 && e instanceof FreeLoaderError && e.code === 'NO_SPACE') continue;
      throw e;
    }
    if (wanted === 1 || primary.morsels === 0) return { ...primary, wanted, copies: 1 };
    const left = candidates.map((c) => ({
      id: c.id,
      freeMorsels: Math.max(
        0,
        Math.floor((c.freeBytes - (primary.bytesPerDonor.get(c.id) ?? 0)) / primary.morselSize),
      ),
    }));
    const replicated = placeReplicas({ primary: primary.extents, copies: wanted, donors: left });
    const bytesPerDonor = new Map(
      [...replicated.perDonor].map(([id, n]) => [id, n * primary.morselSize]),
    );
    return {
      ...primary,
      extents: replicated.extents,
      bytesPerDonor,
      wanted,
      copies: replicated.placed,
    };
  }
}
