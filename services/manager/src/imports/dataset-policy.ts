import type pg from 'pg';
import type { DatasetView, PlacementPolicy } from '@freeloader/protocol';
import type { PolicyPlan } from '../placement/choose-policy.js';
import { setPlacementPolicy } from '../repositories/datasets.js';

/**
 * Remember which policy placed a dataset (shown with the dataset), and fill it into `dataset`,
 * the view the import answers with.
 */
export async function recordPolicy(
  deps: { pg: pg.Pool },
  dataset: DatasetView,
  policy: PlacementPolicy,
): Promise<void> {
  await setPlacementPolicy(deps.pg, dataset.id, policy);
  dataset.policy = policy;
}

/** The policy part of an import's answer: which policy, why, and the host's share. */
export function policySummary(plan: Pick<PolicyPlan, 'policy' | 'reason' | 'localShare'>): {
  policy: PlacementPolicy;
  reason: string;
  localShare?: number;
} {
  return {
    policy: plan.policy,
    reason: plan.reason,
    ...(plan.localShare !== undefined ? { localShare: plan.localShare } : {}),
  };
}
