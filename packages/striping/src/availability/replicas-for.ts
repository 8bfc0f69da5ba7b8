import { repairRatios, type ChainRates } from './rates.js';
import { unavailability } from './unavailability.js';

/** Highest replication level `replicasFor` considers: beyond ρ extra copies barely help. */
export const MAX_REPLICAS = 16;

/**
 * The smallest replication level n whose model availability 1 - p0 reaches `target` (e.g.
 * 0.999), or null when no n ≤ `maxReplicas` does: then the repair caps, not the copy count, are
 * the bottleneck (p0 tends to 1 / (1 + γ(e^ρ - 1)/ρ) as n grows), and the caller says so
 * instead of storing copies that buy nothing.
 *
 * @example
 * // ρ = 10, γ = 1: n = 3 gives 0.9577, n = 5 gives 0.9933, n = 9 gives 0.99901, and no n
 * // passes 0.99955 (the limit as n → ∞).
 * replicasFor(0.99, { lambda: 10, lambda0: 1, mu: 1 }); // 5
 * replicasFor(0.999, { lambda: 10, lambda0: 1, mu: 1 }); // 9
 * replicasFor(0.9996, { lambda: 10, lambda0: 1, mu: 1 }); // null
 */
export function replicasFor(
  target: number,
  rates: ChainRates,
  maxReplicas: number = MAX_REPLICAS,
): number | null {
  if (!(target > 0 && target < 1)) throw new RangeError(`target availability ${target} ∉ (0, 1)`);
  const ratios = repairRatios(rates);
  for (let n = 1; n <= maxReplicas; n++) {
    if (1 - unavailability(n, ratios) >= target) return n;
  }
  return null;
}
