import { FreeLoaderError, type Extent } from '@freeloader/protocol';
import { scaleUnits, tally } from './pattern.js';
import { placeRoundRobin, type DonorSpace } from './round-robin.js';
import { optimalLocalShare } from './throughput-model.js';
import { checkCount, checkDonors, noSpace } from './validate.js';

/** Longest local+remote cycle the ratio is approximated with (slots per extent). */
export const DEFAULT_MAX_RATIO_CYCLE = 64;

export interface LocalShareInput {
  /** The host's local read rate thpt_l and the remote donors' aggregate rate thpt_r (same unit). */
  localRate: number;
  remoteRate: number;
  morsels: number;
  hostFreeMorsels: number;
  /** Free morsels on the remote donors together (default: unlimited). */
  remoteFreeMorsels?: number;
}

export interface LocalShare {
  /** The model's optimum thpt_l / (thpt_l + thpt_r). */
  target: number;
  /** What will be placed locally after the space checks (fraction of the dataset). */
  share: number;
  /** Why `share` differs from `target`, if it does. */
  limitedBy: 'model' | 'host-space' | 'remote-space';
}

/**
 * Phase one of asymmetric striping (seed 000 §4.1.2): the local:remote ratio where the overlap
 * model peaks, reduced when the host has not donated enough space for it, raised when the remote
 * donors cannot hold their part.
 *
 * @example
 *   chooseLocalShare({ localRate: 60, remoteRate: 95, morsels: 1000, hostFreeMorsels: 1000 })
 *   // → { target: 0.387, share: 0.387, limitedBy: 'model' }
 *   chooseLocalShare({ localRate: 60, remoteRate: 95, morsels: 1000, hostFreeMorsels: 200 })
 *   // → { target: 0.387, share: 0.2, limitedBy: 'host-space' }
 */
export function chooseLocalShare(input: LocalShareInput): LocalShare {
  const { morsels, hostFreeMorsels, remoteFreeMorsels = Infinity } = input;
  const target = optimalLocalShare(input.localRate, input.remoteRate);
  if (morsels === 0) return { target, share: target, limitedBy: 'model' };
  const hostCap = Math.min(1, hostFreeMorsels / morsels);
  const floor = Math.max(0, 1 - remoteFreeMorsels / morsels);
  if (target > hostCap) return { target, share: hostCap, limitedBy: 'host-space' };
  if (target < floor) return { target, share: Math.min(floor, hostCap), limitedBy: 'remote-space' };
  return { target, share: target, limitedBy: 'model' };
}

export interface RatioCycle {
  /** Host slots per cycle. */
  local: number;
  /** Slots per remote donor per cycle. */
  perRemote: number;
  /** local + perRemote × remote donors. */
  length: number;
}

/**
 * The small integer cycle closest to `share` local with `remotes` remote donors, each getting the
 * same number of slots (so the remote part stays balanced): minimises |L/(L + k·w) − share| over
 * cycles of at most `maxCycle` slots, shortest cycle on ties. `atMost` forbids rounding up (the
 * host has no room for more).
 *
 * @example ratioCycle(3 / 11, 8) // → { local: 3, perRemote: 1, length: 11 }: the seed's 3:8
 */
export function ratioCycle(
  share: number,
  remotes: number,
  maxCycle = DEFAULT_MAX_RATIO_CYCLE,
  atMost = false,
): RatioCycle {
  if (remotes === 0 || share >= 1) return { local: 1, perRemote: 0, length: 1 };
  if (share <= 0) return { local: 0, perRemote: 1, length: remotes };
  // Start from the two pure cycles (remote only, host only) and search the mixed ones.
  let best: RatioCycle = { local: 0, perRemote: 1, length: remotes };
  let bestErr = share;
  if (!atMost && 1 - share < bestErr) {
    best = { local: 1, perRemote: 0, length: 1 };
    bestErr = 1 - share;
  }
  const longest = Math.max(maxCycle, 2 * remotes);
  for (let k = 1; k * remotes < longest; k++) {
    const exact = (share * k * remotes) / (1 - share);
    for (const local of new Set([
      Math.floor(exact),
      atMost ? Math.floor(exact) : Math.ceil(exact),
    ])) {
      if (local === 0 || local + k * remotes > longest) continue;
      const err = Math.abs(local / (local + k * remotes) - share);
      if (err < bestErr - 1e-12) {
        best = { local, perRemote: k, length: local + k * remotes };
        bestErr = err;
      }
    }
  }
  return best;
}

export interface AsymmetricInput {
  /** Morsels in the dataset; they are placed as [0, morsels). */
  morsels: number;
  /** Remote stripe width: remote donors read at once beside the host. */
  width: number;
  /** Stripe size in morsels (default 1): the cycle is counted in stripe units. */
  unit?: number;
  /** The importing workstation's own agent. */
  host: DonorSpace;
  /** Other donors (the host must not be among them). */
  donors: readonly DonorSpace[];
  /** Fraction of the dataset to place on the host: from {@link chooseLocalShare}. */
  localShare: number;
  /** Longest cycle (default {@link DEFAULT_MAX_RATIO_CYCLE}). */
  maxCycle?: number;
  /** The host has room for no more than `localShare` (round the ratio down, not to nearest). */
  atMost?: boolean;
}

export interface AsymmetricPlan {
  extents: Extent[];
  perDonor: Map<string, number>;
  /** The first cycle used: host slots vs remote slots (the seed writes it local:remote, 3:8). */
  ratio: { local: number; remote: number };
  /** Fraction of the morsels that landed on the host. */
  localShare: number;
}

/**
 * Phase two of asymmetric striping: each cycle holds `local` host slots scattered evenly among
 * `perRemote` slots for each of the top-`width` remote donors (most free space first, like
 * round-robin), so local reads interleave with remote ones. Rounds repeat, re-sorting the remote
 * donors, as donors fill; whatever the cycle cannot place (host full, a short tail that does not
 * fit) is striped round-robin over the donors with room. One extent per round.
 *
 * @throws FreeLoaderError NO_SPACE when host and donors together lack room; VALIDATION_FAILED.
 * @example
 *   placeAsymmetric({ morsels: 22, width: 8, localShare: 3 / 11, host: { id: 'h', freeMorsels: 100 },
 *                     donors: eight donors with room })
 *   // → one extent of 22 morsels, donors = an 11-slot cycle with 'h' 3 times: h holds 6, each other 2
 */
export function placeAsymmetric(request: AsymmetricInput): AsymmetricPlan {
  let input = request;
  const { morsels, width, host, donors, maxCycle = DEFAULT_MAX_RATIO_CYCLE } = input;
  const unit = input.unit ?? 1;
  checkCount('asymmetric placement', morsels);
  checkDonors('asymmetric placement', [host, ...donors]);
  const bad = !Number.isSafeInteger(width) || width < 1 || !Number.isSafeInteger(unit) || unit < 1;
  if (bad || !(input.localShare >= 0 && input.localShare <= 1)) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      'asymmetric placement: width and unit must be ≥ 1 and localShare within [0, 1]',
    );
  }
  const available = host.freeMorsels + donors.reduce((s, d) => s + d.freeMorsels, 0);
  if (available < morsels) noSpace(morsels, available);
  // A share the host has no room for would front-load it and leave the tail remote-only.
  if (morsels > 0 && input.localShare > host.freeMorsels / morsels) {
    input = { ...input, localShare: host.freeMorsels / morsels, atMost: true };
  }
  // Stripe units that do not fit whole are not worth a special case: fall back to single morsels.
  const wholeUnits = [host, ...donors].reduce((s, d) => s + Math.floor(d.freeMorsels / unit), 0);
  const u = wholeUnits >= Math.ceil(morsels / unit) ? unit : 1;
  const units = Math.ceil(morsels / u);
  const free = new Map([host, ...donors].map((d) => [d.id, Math.floor(d.freeMorsels / u)]));
  const extents: Extent[] = [];
  let ratio = { local: 0, remote: 0 };
  let first = 0;
  while (first < units) {
    const round = planCycleRound(units - first, input, free, maxCycle);
    if (!round) break;
    if (extents.length === 0) ratio = round.ratio;
    extents.push({ copy: 0, first, count: round.count, unit: 1, phase: 0, donors: round.pattern });
    for (const [id, n] of tally([extents.at(-1)!])) free.set(id, free.get(id)! - n);
    first += round.count;
  }
  if (first < units) extents.push(...restRoundRobin(units - first, first, width, host.id, free));
  const scaled = scaleUnits(extents, u, morsels);
  const perDonor = tally(scaled);
  const localShare = morsels === 0 ? 0 : (perDonor.get(host.id) ?? 0) / morsels;
  return { extents: scaled, perDonor, ratio, localShare };
}

/**
 * One cycle: `local` host slots spread evenly (Bresenham: slot j is the host's when
 * ⌊(j+1)·L/C⌋ > ⌊j·L/C⌋), so gaps between local morsels differ by at most one even across cycle
 * boundaries; the other slots rotate over the remote donors, `perRemote` times each.
 *
 * @example spread('h', 3, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h2'], 1)
 *   // → a b c h d e f h g h2 h  (host at 3, 7, 10: gaps 4, 3, 4)
 */
export function spread(
  hostId: string,
  local: number,
  remotes: readonly string[],
  perRemote: number,
): string[] {
  const length = local + perRemote * remotes.length;
  const out: string[] = [];
  let r = 0;
  for (let j = 0; j < length; j++) {
    const isLocal = Math.floor(((j + 1) * local) / length) > Math.floor((j * local) / length);
    out.push(isLocal ? hostId : remotes[r++ % remotes.length]!);
  }
  return out;
}

interface CycleRound {
  count: number;
  pattern: string[];
  ratio: { local: number; remote: number };
}

/** One round of whole cycles (plus the tail when it fits); null when the cycle cannot go on. */
function planCycleRound(
  remaining: number,
  input: AsymmetricInput,
  free: Map<string, number>,
  maxCycle: number,
): CycleRound | null {
  const { host, localShare, width } = input;
  const probe = ratioCycle(
    localShare,
    Math.min(width, input.donors.length),
    maxCycle,
    input.atMost,
  );
  const remote = input.donors
    .map((d) => [d.id, free.get(d.id)!] as const)
    .filter(([, f]) => f >= Math.max(1, probe.perRemote))
    .sort(([a, fa], [b, fb]) => fb - fa || (a < b ? -1 : 1))
    .slice(0, width);
  const cycle = ratioCycle(localShare, remote.length, maxCycle, input.atMost);
  if (cycle.local === 0 || (cycle.perRemote > 0 && remote.length === 0)) return null;
  const hostFree = free.get(host.id)!;
  const pattern = spread(
    host.id,
    cycle.local,
    remote.map(([id]) => id),
    cycle.perRemote,
  );
  const fit = Math.min(
    Math.floor(hostFree / cycle.local),
    ...remote.map(([, f]) => Math.floor(f / cycle.perRemote)),
  );
  const whole = Math.floor(remaining / cycle.length);
  const ratio = { local: cycle.local, remote: cycle.perRemote * remote.length };
  const tailFits = (): boolean => {
    const tail = tally([
      {
        copy: 0,
        first: 0,
        count: remaining - fit * cycle.length,
        unit: 1,
        phase: 0,
        donors: pattern,
      },
    ]);
    return [...tail].every(
      ([id, n]) => n <= free.get(id)! - fit * (id === host.id ? cycle.local : cycle.perRemote),
    );
  };
  if (fit > whole || (fit === whole && tailFits())) return { count: remaining, pattern, ratio };
  const count = Math.min(fit, whole) * cycle.length;
  return count > 0 ? { count, pattern, ratio } : null;
}

/** What the cycle could not place: round-robin over the remote donors, the host only if needed. */
function restRoundRobin(
  count: number,
  first: number,
  width: number,
  hostId: string,
  free: Map<string, number>,
): Extent[] {
  const remote = [...free]
    .filter(([id]) => id !== hostId)
    .map(([id, f]) => ({ id, freeMorsels: f }));
  const remoteRoom = remote.reduce((s, d) => s + d.freeMorsels, 0);
  const pool =
    remoteRoom >= count ? remote : [...remote, { id: hostId, freeMorsels: free.get(hostId)! }];
  const plan = placeRoundRobin({ morsels: count, width, donors: pool });
  return plan.extents.map((e) => ({ ...e, first: e.first + first }));
}
