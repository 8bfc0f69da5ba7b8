/**
 * Unavailability p0 of one object kept at replication level n on volatile donors backed by a
 * durable source: the stationary probability of state 0 of the birth-death chain of
 * "ThriftStore: Finessing Reliability Trade-Offs in Replicated Storage Systems" (seed 003, §4.1).
 * State k is "k live replicas"; a replica fails at rate μ (so k → k-1 at kμ), the donors recreate
 * one at rate λ (0 < k < n) and the source seeds one at rate λ0 (k = 0). With ρ = λ/μ and
 * γ = λ0/μ:
 *
 *   p0 = 1 / (1 + γ · Σ_{k=1..n} ρ^(k-1) / k!)
 *
 * The manager uses it to size n for a target availability; it is conservative (all failures are
 * treated as destructive, and repairs of one object are not parallel).
 */

/** Ratios of the chain: ρ = λ/μ (donor repair ratio), γ = λ0/μ (source repair ratio). */
export interface RepairRatios {
  /** How many replicas the donors can recreate during one replica's lifetime (λ/μ). */
  rho: number;
  /** How many replicas the source can seed during one replica's lifetime (λ0/μ). */
  gamma: number;
}

/**
 * p0 for replication level `n` (an integer ≥ 1).
 *
 * @example
 * // n = 1 depends on γ only: 1 / (1 + γ).
 * unavailability(1, { rho: 100, gamma: 9 }); // 0.1
 * // n = 3, ρ = 10, γ = 1: 1 / (1 + (1 + 10/2 + 100/6)) = 0.0423...
 * unavailability(3, { rho: 10, gamma: 1 });
 */
export function unavailability(n: number, { rho, gamma }: RepairRatios): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`replication level ${n} is not ≥ 1`);
  if (!(rho >= 0) || !(gamma >= 0)) throw new RangeError('repair ratios must be ≥ 0');
  // term_k = ρ^(k-1)/k!, built iteratively so large ρ and n never overflow a factorial first.
  let term = 1;
  let sum = 1;
  for (let k = 2; k <= n; k++) {
    term *= rho / k;
    sum += term;
  }
  return 1 / (1 + gamma * sum);
}

/**
 * p0 for a general birth-death chain (the formula before the paper's simplification): births
 * `up[k]` from state k, deaths `down[k]` from state k+1. Used to check the closed form.
 *
 * @example
 * // The ThriftStore chain for n = 2: up = [λ0, λ], down = [μ, 2μ].
 * chainUnavailability([1, 10], [1, 2]); // 1 / (1 + 1 + 1·10/2) = 1/7
 */
export function chainUnavailability(up: readonly number[], down: readonly number[]): number {
  if (up.length !== down.length) throw new RangeError('one death rate per birth rate');
  let product = 1;
  let sum = 1;
  for (let k = 0; k < up.length; k++) {
    product *= (up[k] ?? 0) / (down[k] ?? 1);
    sum += product;
  }
  return 1 / sum;
}
