import type { FastifyInstance } from 'fastify';
import type { DatasetView, PlacementPolicy } from '@freeloader/protocol';
import type { PolicyPlan } from './choose-policy.js';

/**
 * Remember which policy placed a dataset (shown with the dataset), and fill it into `dataset`,
 * the view the import answers with.
 */
export async function recordPolicy(
  app: FastifyInstance,
  dataset: DatasetView,
  policy: PlacementPolicy,
): Promise<void> {
  await app.pg.query('UPDATE datasets SET placement_policy = $2 WHERE id = $1', [
    dataset.id,
    policy,
  ]);
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
