import {
  FreeLoaderError,
  MAX_STRIPE_WIDTH,
  MORSEL_SIZE,
  morselCount,
  type ImportRequest,
  type PlacementPolicy,
} from '@freeloader/protocol';
import {
  chooseLocalShare,
  chooseWidth,
  placeAsymmetric,
  placePredictive,
  type AsymmetricPlan,
} from '@freeloader/striping';
import type { Candidate } from './candidates.js';
import type { PlacementDeps } from './placement-deps.js';
import {
  DEFAULT_STRIPE_WIDTH,
  planImport,
  withCacheFullMessage,
  type ImportPlan,
} from './plan-import.js';
import { candidateSets } from './prefer-unthrottled.js';
import {
  donorSpeeds,
  medianRate,
  ownerActive,
  withHistory,
  type DonorSpeeds,
} from './rate-estimates.js';

export interface PolicyChoice {
  policy: PlacementPolicy;
  reason: string;
}

/**
 * Which policy places an import: the one asked for; asymmetric when a host agent is named;
 * otherwise predictive as soon as the manager has observed delivery rates for any candidate
 * (the others are predicted from their probe or the median), round-robin before that.
 *
 * @example choosePolicy({}, 4, 0) // → round-robin, "no rate history yet"
 *          choosePolicy({}, 4, 3) // → predictive, "rate history for 3 of 4 donors"
 */
export function choosePolicy(
  req: Pick<ImportRequest, 'policy' | 'hostAgentId'>,
  candidates: number,
  withRates: number,
): PolicyChoice {
  if (req.policy) return { policy: req.policy, reason: `${req.policy} as requested` };
  if (req.hostAgentId)
    return { policy: 'asymmetric', reason: 'asymmetric: a host agent was named' };
  if (withRates > 0) {
    return {
      policy: 'predictive',
      reason: `predictive: rate history for ${withRates} of ${candidates} donors`,
    };
  }
  return { policy: 'round-robin', reason: 'round-robin: no rate history yet' };
}

/** An import plan together with the policy that made it and why. */
export interface PolicyPlan extends ImportPlan {
  policy: PlacementPolicy;
  /** Asymmetric: fraction of the morsels on the host. */
  localShare?: number;
  reason: string;
}

/**
 * Plan an import with the right policy (seed 000 §4.1.2): pick the policy, widen the stripe when
 * donors' owners are active (impact control), then place round-robin, predictively from rate
 * history, or asymmetrically around the importing workstation's own agent.
 *
 * @throws FreeLoaderError NO_DONORS (nobody can store, or the host is not a live donor),
 *   NO_SPACE (the cache cannot hold it), VALIDATION_FAILED (asymmetric without a host).
 */
export async function planPlacement(
  deps: PlacementDeps,
  size: number,
  req: ImportRequest,
  candidates: Candidate[],
  who: string,
): Promise<PolicyPlan> {
  const ids = candidates.map((c) => c.id);
  const speeds = await donorSpeeds(deps, ids, who);
  const choice = choosePolicy(req, candidates.length, withHistory(speeds, ids).length);
  const host = choice.policy === 'asymmetric' ? hostOf(req, candidates) : undefined;
  const others = candidates.filter((c) => c.id !== host?.id);
  // Unthrottled donors first when they alone give the width (see prefer-unthrottled.ts).
  const sets = candidateSets(others, req.width ?? DEFAULT_STRIPE_WIDTH);
  for (const [i, set] of sets.entries()) {
    try {
      return placeOn(deps, size, req, set, { speeds, choice, host, ids });
    } catch (e) {
      const last = i === sets.length - 1;
      if (last || !(e instanceof FreeLoaderError && e.code === 'NO_SPACE')) throw e;
    }
  }
  throw new FreeLoaderError('NO_DONORS', 'no donor set to place on');
}

interface PlacementContext {
  speeds: DonorSpeeds;
  choice: PolicyChoice;
  host: Candidate | undefined;
  /** Every candidate (for median rates). */
  ids: string[];
}

/** Place on one candidate set (plus the host, for asymmetric) with the chosen policy. */
function placeOn(
  deps: PlacementDeps,
  size: number,
  req: ImportRequest,
  set: Candidate[],
  { speeds, choice, host, ids }: PlacementContext,
): PolicyPlan {
  const pool = byFreeSpace(set);
  const width = chooseWidth({
    requested: req.width ?? DEFAULT_STRIPE_WIDTH,
    donors: pool.map((c) => ({ id: c.id, active: ownerActive(deps.softState.heartbeatOf(c.id)) })),
    maxWidth: MAX_STRIPE_WIDTH,
  });
  const reason = width.widened
    ? `${choice.reason}; width ${width.width} because ${width.active} owner(s) are active`
    : choice.reason;
  const all = host ? [host, ...set] : set;
  if (choice.policy === 'round-robin' || (pool.length === 0 && !host)) {
    const plan = planImport(size, { ...req, width: Math.max(1, width.width) }, all);
    return { ...plan, policy: 'round-robin', reason };
  }
  const morselSize = req.morselSize ?? MORSEL_SIZE;
  const morsels = morselCount(size, morselSize);
  const unit = req.stripeSize ?? 1;
  const free = (c: Candidate) => Math.floor(c.freeBytes / morselSize);
  const placed = withCacheFullMessage(size, all, () =>
    choice.policy === 'predictive'
      ? placePredictive({
          morsels,
          width: Math.max(1, width.width),
          unit,
          donors: pool.map((c) => ({
            id: c.id,
            freeMorsels: free(c),
            rate: rateOf(speeds, c.id, ids),
          })),
        })
      : asymmetric(speeds, morsels, unit, width.width, host!, pool, free, req),
  );
  const bytesPerDonor = new Map([...placed.perDonor].map(([id, n]) => [id, n * morselSize]));
  const planned: PolicyPlan = {
    morselSize,
    morsels,
    width: 'width' in placed ? placed.width : width.width,
    unit,
    extents: placed.extents,
    bytesPerDonor,
    policy: choice.policy,
    reason: 'note' in placed ? `${reason}; ${placed.note}` : reason,
  };
  if ('localShare' in placed) planned.localShare = placed.localShare;
  return planned;
}

/** Asymmetric placement: local:remote from the model and what the manager knows of the rates. */
function asymmetric(
  speeds: DonorSpeeds,
  morsels: number,
  unit: number,
  width: number,
  host: Candidate,
  pool: Candidate[],
  free: (c: Candidate) => number,
  req: ImportRequest,
): AsymmetricPlan & { note: string } {
  const remote = pool.slice(0, width);
  const ids = pool.map((c) => c.id);
  const pair = speeds.rates.get(host.id);
  const localRate =
    pair?.source === 'pair' ? pair.rate : (speeds.diagnostics.get(host.id)?.diskReadRate ?? null);
  const known = remote.map((c) => rateOf(speeds, c.id, ids));
  const downlink = speeds.diagnostics.get(host.id)?.downloadRate ?? Infinity;
  const remoteRate = known.every((r) => r > 0)
    ? Math.min(
        downlink,
        known.reduce((a, b) => a + b, 0),
      )
    : null;
  let share: number;
  let note: string;
  let atMost = false;
  if (req.localShare !== undefined) {
    share = req.localShare;
    note = `local share ${share.toFixed(3)} as requested`;
  } else if (localRate && remoteRate) {
    const chosen = chooseLocalShare({
      localRate,
      remoteRate,
      morsels,
      hostFreeMorsels: free(host),
      remoteFreeMorsels: pool.reduce((s, c) => s + free(c), 0),
    });
    share = chosen.share;
    atMost = chosen.limitedBy === 'host-space';
    note =
      `model: local ${mb(localRate)} (${pair?.source === 'pair' ? 'observed' : 'probe'}), ` +
      `remote ${mb(remoteRate)} over ${remote.length} → ${chosen.target.toFixed(3)}` +
      (chosen.limitedBy === 'model' ? '' : `, ${chosen.limitedBy} → ${share.toFixed(3)}`);
  } else {
    // Nothing measured yet: treat the host as one more donor of the stripe.
    share = 1 / (remote.length + 1);
    note = 'rates unknown: the host counts as one more donor';
  }
  const plan = placeAsymmetric({
    morsels,
    width: Math.max(1, width),
    unit,
    host: { id: host.id, freeMorsels: free(host) },
    donors: pool.map((c) => ({ id: c.id, freeMorsels: free(c) })),
    localShare: share,
    atMost,
  });
  return { ...plan, note: `${note}; ratio ${plan.ratio.local}:${plan.ratio.remote}` };
}

/** A donor's predicted rate; unknown donors get the median of the known ones (else 1: equal). */
function rateOf(speeds: DonorSpeeds, id: string, ids: readonly string[]): number {
  return speeds.rates.get(id)?.rate ?? medianRate(speeds, ids) ?? 1;
}

function hostOf(req: ImportRequest, candidates: Candidate[]): Candidate {
  if (!req.hostAgentId) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      'asymmetric placement needs hostAgentId: the agent on the importing workstation',
    );
  }
  const host = candidates.find((c) => c.id === req.hostAgentId);
  if (!host) {
    throw new FreeLoaderError(
      'NO_DONORS',
      `host agent ${req.hostAgentId} is not a live storage donor right now`,
    );
  }
  return host;
}

/** Most free space first, ties by id: the order round-robin takes donors in. */
function byFreeSpace(candidates: Candidate[]): Candidate[] {
  return [...candidates].sort(
    (a, b) => b.freeBytes - a.freeBytes || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** Run a placement, turning its morsel-count NO_SPACE into the same message round-robin gives. */
const mb = (bytesPerSecond: number): string => `${(bytesPerSecond / 1e6).toFixed(1)} MB/s`;
