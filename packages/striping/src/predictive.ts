import { FreeLoaderError, type Extent } from '@freeloader/protocol';
import { interleave, scaleUnits, tally } from './pattern.js';
import { checkDonors, checkCount, noSpace } from './validate.js';

/** A donor with free space and a predicted delivery rate to the client (any unit, e.g. B/s). */
export interface RatedDonor {
  id: string;
  freeMorsels: number;
  rate: number;
}

/** Longest cycle (slots in one extent's donor list) a predictive level uses by default. */
export const DEFAULT_MAX_CYCLE = 256;

/**
 * Morsels per donor in proportion to predicted rates (seed 000 §4.1.2, "Predictive Striping"):
 * s_i = B_i·S/A with A = Σ B_i, within each donor's free space, rounded so the total is exactly S.
 *
 * A donor whose proportional share exceeds its free space is filled and the excess is shared by
 * the others in proportion to their rates again (water-filling); fractional parts are resolved
 * by largest remainder (ties: faster donor, then id). Donors with rate 0 take data only when the
 * others are full. All rates 0 means "no information": equal shares.
 *
 * @throws FreeLoaderError NO_SPACE when the donors' free space is less than `morsels`.
 * @example
 *   // Seed Table III, donors 1–4 (MB/s), 1000 morsels, space no object:
 *   predictiveShares(1000, [
 *     { id: '1', rate: 17.64, freeMorsels: 1e6 }, { id: '2', rate: 34.4, freeMorsels: 1e6 },
 *     { id: '3', rate: 44.11, freeMorsels: 1e6 }, { id: '4', rate: 10.07, freeMorsels: 1e6 }]);
 *   // exact 166.07 / 323.85 / 415.27 / 94.80 → 166 / 324 / 415 / 95 (the two largest remainders round up)
 */
export function predictiveShares(
  morsels: number,
  donors: readonly RatedDonor[],
): Map<string, number> {
  checkCount('predictive placement', morsels);
  checkDonors('predictive placement', donors);
  for (const d of donors) {
    if (!Number.isFinite(d.rate) || d.rate < 0) {
      throw new FreeLoaderError(
        'VALIDATION_FAILED',
        `predictive placement: donor ${d.id} rate must be a finite number ≥ 0, got ${d.rate}`,
      );
    }
  }
  const available = donors.reduce((s, d) => s + d.freeMorsels, 0);
  if (available < morsels) noSpace(morsels, available);

  const shares = new Map(donors.map((d) => [d.id, 0]));
  const allZero = donors.every((d) => d.rate === 0);
  const weightOf = (d: RatedDonor): number => (allZero ? 1 : d.rate);
  let left = morsels;
  // Positive-rate donors first; zero-rate ones only absorb what does not fit anywhere else.
  for (const group of [
    donors.filter((d) => weightOf(d) > 0),
    donors.filter((d) => weightOf(d) === 0),
  ]) {
    if (left === 0) break;
    left = fill(left, group, shares, group.every((d) => weightOf(d) === 0) ? () => 1 : weightOf);
  }
  return shares;
}

/** Water-fill `morsels` over `group` by weight within free space; returns what did not fit. */
function fill(
  morsels: number,
  group: readonly RatedDonor[],
  shares: Map<string, number>,
  weight: (d: RatedDonor) => number,
): number {
  let open = group.filter((d) => d.freeMorsels > 0);
  let left = morsels;
  const ideal = new Map<string, number>();
  // Cap donors whose proportional share does not fit, until every remaining share fits.
  for (;;) {
    const total = open.reduce((s, d) => s + weight(d), 0);
    if (open.length === 0 || total === 0) return left;
    const over = open.filter((d) => (weight(d) * left) / total > d.freeMorsels);
    if (over.length === 0) {
      for (const d of open) ideal.set(d.id, (weight(d) * left) / total);
      break;
    }
    for (const d of over) {
      shares.set(d.id, d.freeMorsels);
      left -= d.freeMorsels;
    }
    open = open.filter((d) => !over.includes(d));
  }
  // Largest remainder: floors first, then one more to the biggest fractional parts.
  let given = 0;
  for (const d of open) {
    const n = Math.floor(ideal.get(d.id)!);
    shares.set(d.id, n);
    given += n;
  }
  const byRemainder = open
    .filter((d) => shares.get(d.id)! < d.freeMorsels)
    .sort((a, b) => {
      const ra = ideal.get(a.id)! - shares.get(a.id)!;
      const rb = ideal.get(b.id)! - shares.get(b.id)!;
      return rb - ra || weight(b) - weight(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    });
  let extra = left - given;
  for (let i = 0; extra > 0 && byRemainder.length > 0; i = (i + 1) % byRemainder.length) {
    const d = byRemainder[i]!;
    if (shares.get(d.id)! < d.freeMorsels) {
      shares.set(d.id, shares.get(d.id)! + 1);
      extra--;
    }
  }
  return extra;
}

/**
 * Extents that give each donor exactly `shares` morsels of [first, first + Σ shares), interleaved
 * in proportion, in a few levels: level one repeats a cycle of at most `maxCycle` slots holding
 * floor(s_i / n) slots per donor n times (n = ⌈S / maxCycle⌉); what the floors left over (fewer
 * than n per donor) is placed the same way after it, until a level fits in one cycle. Each level
 * shrinks the rest by about maxCycle / donors, so even 1 TiB of morsels takes a handful of extents.
 *
 * @example
 *   exactStripes(new Map([['a', 7], ['b', 3]]), 0, 4)
 *   // n = 3: a ⌊7/3⌋ = 2, b 1 → [{first:0,count:9,donors:[a,b,a]}], rest a 1 → [{first:9,count:1,donors:[a]}]
 */
export function exactStripes(
  shares: ReadonlyMap<string, number>,
  first: number,
  maxCycle = DEFAULT_MAX_CYCLE,
): Extent[] {
  const rest = new Map([...shares].filter(([, n]) => n > 0));
  const cap = Math.max(maxCycle, 4 * rest.size);
  const extents: Extent[] = [];
  let total = [...rest.values()].reduce((a, b) => a + b, 0);
  while (total > 0) {
    const cycles = total <= cap ? 1 : Math.ceil(total / cap);
    const slots = [...rest].map(([id, n]) => [id, Math.floor(n / cycles)] as const);
    const donors = interleave(slots);
    const count = donors.length * cycles;
    extents.push({ copy: 0, first, count, unit: 1, phase: 0, donors });
    for (const [id, k] of slots) {
      const n = rest.get(id)! - k * cycles;
      if (n > 0) rest.set(id, n);
      else rest.delete(id);
    }
    first += count;
    total -= count;
  }
  return extents;
}

export interface PredictiveInput {
  /** Morsels in the dataset; they are placed as [0, morsels). */
  morsels: number;
  /** Donors read at once: the `width` with most free space are used (more if they are too full). */
  width: number;
  /** Stripe size in morsels (default 1): shares are counted in whole stripe units. */
  unit?: number;
  donors: readonly RatedDonor[];
  /** Longest donor cycle per extent (default {@link DEFAULT_MAX_CYCLE}). */
  maxCycle?: number;
}

export interface PredictivePlan {
  /** Copy-0 extents covering [0, morsels) in order, without overlap. */
  extents: Extent[];
  /** Morsels assigned to each donor that received any. */
  perDonor: Map<string, number>;
  /** Donors used (the stripe width actually achieved). */
  width: number;
}

/**
 * Predictive striping: choose the stripe node set like round-robin does (most free space first,
 * ties to the faster donor), widening it only when those donors cannot hold the dataset, then
 * split the dataset between them by {@link predictiveShares} and lay the split out with
 * {@link exactStripes}, so faster donors serve proportionally more of every stretch of the file.
 *
 * @throws FreeLoaderError NO_SPACE when all donors together lack room; VALIDATION_FAILED on bad input.
 * @example
 *   placePredictive({ morsels: 1000, width: 4, donors: tableIII })
 *   // perDonor 166 / 324 / 415 / 95; one extent with a 250-slot cycle repeated 4 times plus
 *   // a short tail holding the floors' leftovers
 */
export function placePredictive(input: PredictiveInput): PredictivePlan {
  const { morsels, width, donors, maxCycle = DEFAULT_MAX_CYCLE } = input;
  let unit = input.unit ?? 1;
  checkCount('predictive placement', morsels);
  checkDonors('predictive placement', donors);
  if (!Number.isSafeInteger(width) || width < 1 || !Number.isSafeInteger(unit) || unit < 1) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      'predictive placement: width and unit must be ≥ 1',
    );
  }
  const available = donors.reduce((s, d) => s + d.freeMorsels, 0);
  if (available < morsels) noSpace(morsels, available);
  // Whole stripe units may not fit where single morsels would: then stripe morsel by morsel.
  if (
    donors.reduce((s, d) => s + Math.floor(d.freeMorsels / unit), 0) < Math.ceil(morsels / unit)
  ) {
    unit = 1;
  }
  const units = Math.ceil(morsels / unit);
  const ranked = donors
    .map((d) => ({ ...d, freeMorsels: Math.floor(d.freeMorsels / unit) }))
    .filter((d) => d.freeMorsels > 0)
    .sort((a, b) => b.freeMorsels - a.freeMorsels || b.rate - a.rate || (a.id < b.id ? -1 : 1));
  const chosen = ranked.slice(0, width);
  let room = chosen.reduce((s, d) => s + d.freeMorsels, 0);
  for (const d of ranked.slice(width)) {
    if (room >= units) break;
    chosen.push(d);
    room += d.freeMorsels;
  }
  const shares = predictiveShares(units, chosen);
  const extents = scaleUnits(exactStripes(shares, 0, maxCycle), unit, morsels);
  return { extents, perDonor: tally(extents), width: chosen.length };
}
