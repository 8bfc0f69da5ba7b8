import type { ImportResponse } from '@freeloader/protocol';

/**
 * What the plan says about copies, e.g. "2 copies of each morsel (manager default …)." or
 * "1 of 2 copies placed: too few donors with room; repair adds the rest."
 */
export function copiesSentence(plan: ImportResponse['plan']): string {
  const wanted = plan.replicas ?? 1;
  const placed = plan.placedCopies ?? wanted;
  const why = plan.replicasReason ? ` (${plan.replicasReason})` : '';
  if (placed < wanted) {
    return `${placed} of ${wanted} copies placed${why}: too few donors with room; repair adds the rest.`;
  }
  return `${wanted} ${wanted === 1 ? 'copy' : 'copies'} of each morsel${why}.`;
}
