import { FreeLoaderError, type Extent } from '@freeloader/protocol';

/** A donor as placement sees it: an id and how many morsels it can still take. */
export interface DonorSpace {
  id: string;
  freeMorsels: number;
}

export interface RoundRobinInput {
  /** Morsels in the dataset; they are placed as [0, morsels). */
  morsels: number;
  /** Requested stripe width: donors written to (and read from) simultaneously. */
  width: number;
  /** Stripe size in morsels: consecutive morsels per donor before moving on. Default 1. */
  unit?: number;
  donors: readonly DonorSpace[];
}

export interface RoundRobinPlan {
  /** Copy-0 extents covering [0, morsels) in order, without overlap. */
  extents: Extent[];
  /** Morsels assigned to each donor that received any. */
  perDonor: Map<string, number>;
}

/**
 * Greedy round-robin placement (FreeLoader paper §4.1.2, "Stripe Fit").
 *
 * Each round sorts donors by free space (most first, ties by id so plans are deterministic)
 * and stripes onto the top `width` of them as many whole stripe cycles as they can all take,
 * emitting one extent per round; the overflow is placed by re-sorting and repeating. When fewer
 * than `width` donors have room for a stripe unit, the width decrements. Rounds advance by whole
 * cycles, so a plan has at most about two extents per donor however large the dataset is.
 *
 * Near a full cache, when no donor has room for a whole stripe unit but the fragments still add
 * up, the rest is striped over the fragments with the unit shrunk to fit (each extent carries its
 * own unit), so a placement succeeds exactly when total free space suffices.
 *
 * @throws FreeLoaderError NO_SPACE (checked before anything is planned) when the donors' free
 *   space together is less than `morsels`; VALIDATION_FAILED on malformed input.
 *
 * @example
 *   placeRoundRobin({ morsels: 10, width: 2, unit: 2, donors: [
 *     { id: 'a', freeMorsels: 4 }, { id: 'b', freeMorsels: 8 }, { id: 'c', freeMorsels: 6 } ] });
 *   // round 1: b,c (8,6 free) take 3 cycles of 2+2 → {first:0,count:10,unit:2,donors:['b','c']}
 *   //   — 10 morsels fit in one extent: b gets 0-1,4-5,8-9 (6), c gets 2-3,6-7 (4).
 *   // perDonor: b → 6, c → 4
 */
export function placeRoundRobin(input: RoundRobinInput): RoundRobinPlan {
  const { morsels, width, unit = 1, donors } = input;
  validate(morsels, width, unit, donors);

  const available = donors.reduce((sum, d) => sum + d.freeMorsels, 0);
  if (available < morsels) {
    throw new FreeLoaderError(
      'NO_SPACE',
      `cannot place ${morsels} morsels: donors have ${available} morsels free in total`,
      { needed: morsels, available },
    );
  }

  // Most free first, ties by id: sorted once; each round only re-merges the donors it used.
  const order: [string, number][] = donors
    .filter((d) => d.freeMorsels > 0)
    .map((d): [string, number] => [d.id, d.freeMorsels])
    .sort(mostFreeFirst);
  const perDonor = new Map<string, number>();
  const extents: Extent[] = [];
  let first = 0;

  while (first < morsels) {
    const remaining = morsels - first;
    const round =
      planRound(topWith(order, unit, width), width, unit, remaining) ??
      planFragments(topWith(order, 1, width), width, remaining);
    extents.push({
      copy: 0,
      first,
      count: round.count,
      unit: round.unit,
      phase: 0,
      donors: round.donors,
    });
    const shares = sharesOf(round.count, round.unit, round.donors);
    for (const [id, n] of shares) perDonor.set(id, (perDonor.get(id) ?? 0) + n);
    // A round's donors are the first of `order`: take them out, charge them, merge them back.
    const used = order.splice(0, round.donors.length);
    for (const entry of used) entry[1] -= shares.get(entry[0]) ?? 0;
    mergeInto(order, used.filter(([, f]) => f > 0).sort(mostFreeFirst));
    first += round.count;
  }
  return { extents, perDonor };
}

interface Round {
  count: number;
  unit: number;
  donors: string[];
}

/**
 * One round over donors with at least `unit` free: whole cycles up to what the fullest-but-least
 * chosen donor takes, folding in the tail when it fits too. Null when no donor has a whole unit.
 */
function planRound(
  eligible: [string, number][],
  width: number,
  unit: number,
  remaining: number,
): Round | null {
  const chosen = eligible.slice(0, width);
  if (chosen.length === 0) return null;
  const cycle = chosen.length * unit;
  const minFree = Math.min(...chosen.map(([, f]) => f));
  const cyclesFit = Math.floor(minFree / unit); // ≥ 1: every eligible donor has a unit
  const cyclesNeeded = Math.floor(remaining / cycle);

  if (cyclesFit < cyclesNeeded) {
    return { count: cyclesFit * cycle, unit, donors: chosen.map(([id]) => id) };
  }
  // Everything left fits in whole cycles plus a tail; the tail adds at most one unit per donor.
  const ids = chosen.map(([id]) => id).slice(0, Math.ceil(remaining / unit));
  const shares = sharesOf(remaining, unit, ids);
  if (chosen.every(([id, f]) => (shares.get(id) ?? 0) <= f)) {
    return { count: remaining, unit, donors: trim(ids, remaining, unit) };
  }
  // Tail does not fit beside the full cycles: place the cycles, re-sort for the tail.
  return { count: cyclesNeeded * cycle, unit, donors: chosen.map(([id]) => id) };
}

/** A round over leftovers smaller than a unit: shrink the unit to what the smallest can take. */
function planFragments(eligible: [string, number][], width: number, remaining: number): Round {
  const chosen = eligible.slice(0, width);
  const minFree = Math.min(...chosen.map(([, f]) => f));
  const unit = Math.min(minFree, Math.ceil(remaining / chosen.length));
  const count = Math.min(remaining, unit * chosen.length);
  return {
    count,
    unit,
    donors: trim(
      chosen.map(([id]) => id),
      count,
      unit,
    ),
  };
}

/** Most free first, ties by id (so plans are deterministic). */
function mostFreeFirst([a, fa]: [string, number], [b, fb]: [string, number]): number {
  return fb - fa || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * The first `width` donors of `order` (most free first) with at least `min` free: a prefix,
 * since every donor after one with less than `min` has less too.
 */
function topWith(order: readonly [string, number][], min: number, width: number) {
  let n = 0;
  while (n < order.length && n < width && order[n]![1] >= min) n++;
  return order.slice(0, n);
}

/**
 * Merge `sorted` into `order`, both most free first, keeping `order` sorted: linear in the
 * donors, where re-sorting every donor every round made a plan cost rounds × D log D.
 *
 * @example const order = [['c', 9], ['a', 3]]; mergeInto(order, [['b', 5]]) // c, b, a
 */
function mergeInto(order: [string, number][], sorted: [string, number][]): void {
  if (sorted.length === 0) return;
  const rest = order.splice(0, order.length);
  let i = 0;
  let j = 0;
  while (i < rest.length || j < sorted.length) {
    if (j >= sorted.length || (i < rest.length && mostFreeFirst(rest[i]!, sorted[j]!) <= 0)) {
      order.push(rest[i++]!);
    } else {
      order.push(sorted[j++]!);
    }
  }
}

/** Drop donors an extent of `count` morsels never reaches (same mapping, clearer donor list). */
function trim(ids: string[], count: number, unit: number): string[] {
  return ids.slice(0, Math.min(ids.length, Math.ceil(count / unit)));
}

/** Morsels each donor receives from an extent of `count` morsels striped `unit` at a time. */
function sharesOf(count: number, unit: number, ids: readonly string[]): Map<string, number> {
  const cycle = unit * ids.length;
  const cycles = Math.floor(count / cycle);
  let tail = count - cycles * cycle;
  const out = new Map<string, number>();
  for (const id of ids) {
    const extra = Math.min(unit, tail);
    tail -= extra;
    out.set(id, cycles * unit + extra);
  }
  return out;
}

function validate(
  morsels: number,
  width: number,
  unit: number,
  donors: readonly DonorSpace[],
): void {
  const bad = (what: string): never => {
    throw new FreeLoaderError('VALIDATION_FAILED', `round-robin placement: ${what}`);
  };
  if (!Number.isSafeInteger(morsels) || morsels < 0) bad(`morsels must be ≥ 0, got ${morsels}`);
  if (!Number.isSafeInteger(width) || width < 1) bad(`width must be ≥ 1, got ${width}`);
  if (!Number.isSafeInteger(unit) || unit < 1) bad(`unit must be ≥ 1, got ${unit}`);
  const seen = new Set<string>();
  for (const d of donors) {
    if (seen.has(d.id)) bad(`donor ${d.id} listed twice`);
    seen.add(d.id);
    if (!Number.isSafeInteger(d.freeMorsels) || d.freeMorsels < 0) {
      bad(`donor ${d.id} free space must be ≥ 0 morsels, got ${d.freeMorsels}`);
    }
  }
}
