import {
  DECLUSTER_MAX_CYCLES,
  FreeLoaderError,
  donorsOfMorsel,
  type Extent,
} from '@freeloader/protocol';
import type { DonorSpace } from './round-robin.js';

export interface ReplicaInput {
  /** The copy-0 placement (any policy's extents). */
  primary: readonly Extent[];
  /** Copies wanted in all, copy 0 included (n ≥ 1). */
  copies: number;
  /** Donors that may take copies, with what they can hold beyond the primary's morsels. */
  donors: readonly DonorSpace[];
}

export interface ReplicaPlan {
  /** Copy 0 unchanged, then copies 1…placed−1 (each copy's extents mirror copy 0's ranges). */
  extents: Extent[];
  /** Copies placed (≤ `copies`): fewer when too few distinct donors have room for another. */
  placed: number;
  /** Morsels each donor receives over every copy (copy 0 included). */
  perDonor: Map<string, number>;
}

/**
 * Place copies 1…n−1 of a placed dataset so that no two copies of a morsel share a donor
 * (ThriftStore's replication level n, seed 003 §3.2), DECLUSTERED: copy c of an extent keeps
 * copy 0's range, unit and phase, but its donor list runs through K = min(D − 1,
 * DECLUSTER_MAX_CYCLES) stripe cycles of copy 0's D slots, cycle j rotated by
 * 1 + ((j + c − 1) mod (D − 1)). A plain rotation (the same for every cycle) put the twins of
 * one donor's morsels all on one other donor, so repairing a lost donor had one sender per
 * copy and the repair benchmark ran at 0.19 of the caps; declustered, its twins sit on all
 * D − 1 others, which all send at once. Each cycle is a permutation of copy 0's slots, so every
 * donor keeps its share (± one stripe unit in a partial cycle), and copy c's list stays
 * O(D × K) entries in one extent per copy-0 extent. A slot whose rotated donor already holds
 * the slot in an earlier copy or lacks room takes the donor with the most room left that holds
 * no copy of it. A copy that cannot be completed for every extent is not placed at all, and no
 * later copy is tried: `placed` says how many copies exist.
 *
 * @example
 *   placeReplicas({ copies: 2, primary: [{ copy: 0, first: 0, count: 6, unit: 1, phase: 0,
 *     donors: ['a', 'b', 'c'] }], donors: [{ id: 'a', freeMorsels: 2 }, { id: 'b', freeMorsels: 2 },
 *     { id: 'c', freeMorsels: 2 }] });
 *   // copy 1: donors ['b', 'c', 'a', 'c', 'a', 'b']: a's morsels 0 and 3 have twins on b and c.
 */
export function placeReplicas(input: ReplicaInput): ReplicaPlan {
  const { primary, copies, donors } = input;
  if (!Number.isSafeInteger(copies) || copies < 1) {
    throw new FreeLoaderError('VALIDATION_FAILED', `copies must be ≥ 1, got ${copies}`);
  }
  const free = new Map(donors.map((d) => [d.id, d.freeMorsels]));
  const extents = primary.map((e) => ({ ...e, copy: 0 }));
  let placed = 1;
  for (let c = 1; c < copies; c++) {
    const trial = new Map(free);
    const copy: Extent[] = [];
    for (const e of primary) {
      const list = copySlots(e, c, extents, trial);
      if (!list) break;
      copy.push({ ...e, copy: c, donors: list });
    }
    if (copy.length < primary.length) break;
    extents.push(...copy);
    for (const [id, n] of trial) free.set(id, n);
    placed++;
  }
  return { extents, placed, perDonor: tallyCopies(extents) };
}

/** Stripe cycles copy 0 of `e` touches, up to `limit`. */
function cyclesTouched(e: Extent, limit: number): number {
  const lastSlot = Math.ceil(e.count / e.unit) - 1 + e.phase;
  return Math.max(1, Math.min(limit, Math.floor(lastSlot / e.donors.length) + 1));
}

/**
 * Cycles of copy 0's slots a declustered copy of `e` rotates through: D − 1 (every rotation
 * but none), capped by DECLUSTER_MAX_CYCLES and by the cycles the extent actually has.
 *
 * @example declusterCycles({ copy: 0, first: 0, count: 60, unit: 1, phase: 0,
 *   donors: ['a', 'b', 'c', 'd', 'e', 'f'] }) // → 5
 */
export function declusterCycles(e: Extent): number {
  const d = e.donors.length;
  return d <= 2 ? 1 : cyclesTouched(e, Math.min(d - 1, DECLUSTER_MAX_CYCLES));
}

/**
 * Slot `k` of copy `c`'s declustered list for a stripe of `d` slots: cycle ⌊k / d⌋ shifts
 * copy 0's slot k mod d by 1 + ((cycle + c − 1) mod (d − 1)), never 0, and two copies never by
 * the same amount in one cycle (while c < d).
 *
 * @example rotatedSlot(7, 1, 6) // cycle 1, slot 1, shift 2 → slot 3
 */
export function rotatedSlot(k: number, c: number, d: number): number {
  if (d === 1) return 0;
  const shift = 1 + ((Math.floor(k / d) + c - 1) % (d - 1));
  return ((k % d) + shift) % d;
}

/**
 * Donors of each of `slots` slots of extent `e`'s range over the copies placed so far: a list
 * of length L serves slot k at k mod L (every list is copy 0's D slots times some cycles).
 */
function slotDonors(placed: readonly Extent[], e: Extent, slots: number): Set<string>[] {
  const out = Array.from({ length: slots }, () => new Set<string>());
  for (const x of placed) {
    if (x.first !== e.first || x.count !== e.count) continue;
    out.forEach((set, k) => set.add(x.donors[k % x.donors.length]!));
  }
  return out;
}

/** Declustered donor list of copy `c` of `e`, or null when some slot has no donor with room. */
function copySlots(
  e: Extent,
  c: number,
  placed: readonly Extent[],
  free: Map<string, number>,
): string[] | null {
  const d = e.donors.length;
  const slots = d * declusterCycles(e);
  const taken = slotDonors(placed, e, slots);
  const shares = slotShares({ ...e, donors: new Array<string>(slots).fill('') });
  const list: string[] = [];
  for (let k = 0; k < slots; k++) {
    const need = shares[k]!;
    const fits = (id: string) => !taken[k]!.has(id) && (free.get(id) ?? 0) >= need;
    const rotated = e.donors[rotatedSlot(k, c, d)]!;
    const chosen = fits(rotated) ? rotated : roomiest(free, fits);
    if (!chosen) return null;
    free.set(chosen, free.get(chosen)! - need);
    list.push(chosen);
  }
  return list;
}

/** The donor with most room that `fits`, ties by id; undefined when none does. */
function roomiest(free: Map<string, number>, fits: (d: string) => boolean): string | undefined {
  let best: string | undefined;
  for (const [id, f] of free) {
    if (!fits(id)) continue;
    const b = best === undefined ? -1 : free.get(best)!;
    if (f > b || (f === b && id < best!)) best = id;
  }
  return best;
}

/**
 * Morsels at each slot of an extent's donor list.
 *
 * @example slotShares({ copy: 0, first: 0, count: 5, unit: 2, phase: 0, donors: ['a', 'b'] })
 *   // → [3, 2]
 */
export function slotShares(e: Extent): number[] {
  const shares = e.donors.map(() => 0);
  for (let b = 0; b * e.unit < e.count; b++) {
    shares[(b + e.phase) % e.donors.length]! += Math.min(e.unit, e.count - b * e.unit);
  }
  return shares;
}

/**
 * Morsels per donor over every extent of every copy (what reservations and the ledger count).
 *
 * @example tallyCopies([{ copy: 0, first: 0, count: 3, unit: 1, phase: 0, donors: ['a'] },
 *   { copy: 1, first: 0, count: 3, unit: 1, phase: 0, donors: ['b'] }]) // → a: 3, b: 3
 */
export function tallyCopies(extents: readonly Extent[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of extents) {
    slotShares(e).forEach((n, i) => {
      const d = e.donors[i]!;
      if (n > 0) out.set(d, (out.get(d) ?? 0) + n);
    });
  }
  return out;
}

/**
 * Check the replication invariant morsel by morsel: each of [0, morsels) has `copies` holders,
 * all distinct, and copies are numbered 0…copies−1. O(morsels × copies): for tests and plans
 * small enough to double-check (like {@link auditCover}).
 *
 * @throws FreeLoaderError INTERNAL naming the first morsel that breaks it.
 * @example auditReplicas(plan.extents, 10, 2)
 */
export function auditReplicas(extents: readonly Extent[], morsels: number, copies: number): void {
  for (let m = 0; m < morsels; m++) {
    const holders = donorsOfMorsel(extents, m);
    if (holders.length !== copies) {
      throw new FreeLoaderError(
        'INTERNAL',
        `morsel ${m} has ${holders.length} of ${copies} copies`,
      );
    }
    if (new Set(holders).size !== holders.length) {
      throw new FreeLoaderError('INTERNAL', `morsel ${m} has two copies on one donor`);
    }
  }
  const numbers = new Set(extents.map((e) => e.copy));
  if (numbers.size !== copies || [...numbers].some((c) => c < 0 || c >= copies)) {
    throw new FreeLoaderError('INTERNAL', `copies are not numbered 0…${copies - 1}`);
  }
}
