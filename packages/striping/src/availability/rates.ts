import type { RepairRatios } from './unavailability.js';

const SECONDS_PER_YEAR = 365 * 24 * 3600;

/** What a deployment measures or configures; rates in bytes per second, times in seconds. */
export interface RepairSetting {
  /** Size of one repaired unit (the paper's 1 GB object; a morsel in FreeLoader). */
  objectBytes: number;
  /** Average bytes held by one donor (all copies of all objects / number of donors). */
  bytesPerDonor: number;
  /** Per-donor repair cap b. */
  donorRepairBytesPerS: number;
  /** Source (durable copy) repair cap B. */
  sourceRepairBytesPerS: number;
  /** Mean time to a destructive (permanent) donor failure. */
  donorMttfS: number;
  /**
   * True when a failed donor's objects are repaired by as many donors at once (each object's
   * wait is one transfer, object/b): the optimistic bound. Default false: the paper's
   * conservative estimate, one donor recreating the failed donor's data.
   */
  parallel?: boolean;
}

/** Rates of the chain, per second: λ (donor repair), λ0 (source repair), μ (replica failure). */
export interface ChainRates {
  lambda: number;
  lambda0: number;
  mu: number;
}

/**
 * The paper's estimate (seed 003 §4.3.1): a replica dies with its donor, μ = 1/MTTF; a failed
 * donor's d bytes are recreated at the cap, so an object waits half of d/b on average and
 * λ = 2b/d (λ0 = 2B/d likewise). A donor holding less than two objects still needs one whole
 * object's transfer, so the wait is max(d/2, object)/b: object size only matters for tiny d.
 * With `parallel`, the wait is one object's transfer. A copy the source seeds lands on a donor,
 * whose download is capped at b too, so λ0 uses min(B, b).
 *
 * @example
 * // Seed 003: 32 TB × 3 over 1,000 donors (d ≈ 98 GB), b = 1 Mbps, MTTF 1 year:
 * // λ ≈ 2 · 125,000 / 96e9 per second ≈ 82 copies a year (the paper rounds to 78).
 * chainRates({ objectBytes: 1e9, bytesPerDonor: 96e9, donorRepairBytesPerS: 125_000,
 *   sourceRepairBytesPerS: 125_000, donorMttfS: 365 * 86400 });
 */
export function chainRates(s: RepairSetting): ChainRates {
  if (!(s.donorMttfS > 0)) throw new RangeError('donor MTTF must be > 0');
  if (!(s.objectBytes > 0) || !(s.bytesPerDonor >= 0)) throw new RangeError('sizes must be > 0');
  const wait = s.parallel ? s.objectBytes : Math.max(s.bytesPerDonor / 2, s.objectBytes);
  return {
    lambda: s.donorRepairBytesPerS / wait,
    lambda0: Math.min(s.sourceRepairBytesPerS, s.donorRepairBytesPerS) / wait,
    mu: 1 / s.donorMttfS,
  };
}

/**
 * ρ and γ from rates.
 *
 * @example repairRatios({ lambda: 82, lambda0: 41, mu: 1 }); // { rho: 82, gamma: 41 }
 */
export function repairRatios({ lambda, lambda0, mu }: ChainRates): RepairRatios {
  if (!(mu > 0)) throw new RangeError('failure rate μ must be > 0');
  return { rho: lambda / mu, gamma: lambda0 / mu };
}

/** Rates given per year (as the paper quotes them) to per second. */
export function perYear(ratePerYear: number): number {
  return ratePerYear / SECONDS_PER_YEAR;
}
