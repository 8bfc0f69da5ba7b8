import {
  FreeLoaderError,
  MAX_REPLICAS,
  MORSEL_SIZE,
  type ImportRequest,
} from '@freeloader/protocol';
import { chainRates, repairRatios, replicasFor, unavailability } from '@freeloader/striping';
import type { DonorLifetimes } from '../repositories/donor-lifetimes.js';

/** Model default: a donor's mean time to a permanent failure (seed 003's one year). */
export const DEFAULT_DONOR_MTTF_S = 365 * 24 * 3600;
/** Model default: per-donor repair cap b, 2 Mbps in bytes/s (docs/availability.md). */
export const MODEL_DONOR_REPAIR_BYTES_PER_S = 250_000;
/** Model default: source repair cap B, 1 Mbps in bytes/s (docs/availability.md). */
export const MODEL_SOURCE_REPAIR_BYTES_PER_S = 125_000;
/** Model default: bytes a donor holds when the ledger has nothing yet (the paper's ~96 GB). */
export const DEFAULT_BYTES_PER_DONOR = 96e9;
/** Departures before the measured MTTF replaces the default (one is too few to trust). */
export const MIN_DEPARTURES_MEASURED = 2;

/** The copies an import wants, the availability target behind them, and why. */
export interface ReplicaCount {
  replicas: number;
  availabilityTarget: number | null;
  reason: string;
}

/**
 * How many copies of each morsel an import wants: `replicas` as asked; for `availability`, the
 * smallest n whose ThriftStore p0 (seed 003 §4.1) reaches it, with the donors' MTTF measured
 * from the ledger (enrolled donor-time over departures, once MIN_DEPARTURES_MEASURED donors
 * left) and their bytes per donor, else the model's defaults; otherwise the manager's default.
 *
 * @throws FreeLoaderError VALIDATION_FAILED when both are given, or when no n ≤ MAX_REPLICAS
 *   reaches the target (the repair caps, not copies, are the limit then).
 * @example
 *   replicaCount({ replicas: 3 }, 2, lives) // → { replicas: 3, reason: '3 copies as requested' }
 *   replicaCount({}, 2, lives)              // → { replicas: 2, reason: 'manager default (REPLICAS_DEFAULT=2)' }
 */
export function replicaCount(
  req: Pick<ImportRequest, 'replicas' | 'availability'>,
  defaultReplicas: number,
  lives: DonorLifetimes,
): ReplicaCount {
  if (req.replicas !== undefined && req.availability !== undefined) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      'give either replicas (a copy count) or availability (a target the manager turns into a copy count), not both',
    );
  }
  if (req.replicas !== undefined) {
    return {
      replicas: req.replicas,
      availabilityTarget: null,
      reason: `${req.replicas} ${req.replicas === 1 ? 'copy' : 'copies'} as requested`,
    };
  }
  if (req.availability === undefined) {
    return {
      replicas: defaultReplicas,
      availabilityTarget: null,
      reason: `manager default (REPLICAS_DEFAULT=${defaultReplicas})`,
    };
  }
  const measured = lives.departures >= MIN_DEPARTURES_MEASURED;
  const mttf = measured ? lives.enrolledSeconds / lives.departures : DEFAULT_DONOR_MTTF_S;
  const perDonor = lives.donors > 0 && lives.usedBytes > 0 ? lives.usedBytes / lives.donors : 0;
  const rates = chainRates({
    objectBytes: MORSEL_SIZE,
    bytesPerDonor: perDonor || DEFAULT_BYTES_PER_DONOR,
    donorRepairBytesPerS: MODEL_DONOR_REPAIR_BYTES_PER_S,
    sourceRepairBytesPerS: MODEL_SOURCE_REPAIR_BYTES_PER_S,
    donorMttfS: Math.max(1, mttf),
  });
  const inputs =
    `donor MTTF ${days(mttf)} (${measured ? `measured: ${lives.departures} departures` : 'model default'}), ` +
    `${perDonor ? `${gb(perDonor)} per donor` : `${gb(DEFAULT_BYTES_PER_DONOR)} per donor (model default)`}, ` +
    `b ${mbps(MODEL_DONOR_REPAIR_BYTES_PER_S)}, B ${mbps(MODEL_SOURCE_REPAIR_BYTES_PER_S)}`;
  const n = replicasFor(req.availability, rates, MAX_REPLICAS);
  if (n === null) {
    const best = 1 - unavailability(MAX_REPLICAS, repairRatios(rates));
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `availability ${req.availability} is out of reach: ${MAX_REPLICAS} copies give ${best.toFixed(6)} ` +
        `with ${inputs}; repair bandwidth, not copies, limits it`,
    );
  }
  const p0 = unavailability(n, repairRatios(rates));
  return {
    replicas: n,
    availabilityTarget: req.availability,
    reason:
      `availability ${req.availability}: ${n} ${n === 1 ? 'copy gives' : 'copies give'} ` +
      `unavailability p0 ${p0.toExponential(2)} (ThriftStore model with ${inputs})`,
  };
}

const days = (s: number): string =>
  s < 2 * 86400 ? `${(s / 3600).toFixed(1)} hours` : `${(s / 86400).toFixed(0)} days`;
const gb = (b: number): string => `${(b / 1e9).toFixed(1)} GB`;
const mbps = (bps: number): string => `${((bps * 8) / 1e6).toFixed(1)} Mbps`;
