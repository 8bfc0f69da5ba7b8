import { FreeLoaderError, donorsOfMorsel, type Extent } from '@freeloader/protocol';
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
 * (ThriftStore's replication level n, seed 003 §3.2). Copy c of an extent keeps copy 0's
 * range, unit and phase, so a morsel sits at the same slot of every copy; each slot of copy c
 * takes copy 0's donor list rotated by c (the stripe stays spread and every donor keeps its share)
 * unless that donor already holds the slot in an earlier copy or lacks room, then the donor with
 * the most room left that holds no copy of the slot. A copy that cannot be completed for every
 * extent is not placed at all, and no later copy is tried: `placed` says how many copies exist.
 *
 * @example
 *   placeReplicas({ copies: 2, primary: [{ copy: 0, first: 0, count: 4, unit: 1, phase: 0,
 *     donors: ['a', 'b'] }], donors: [{ id: 'a', freeMorsels: 2 }, { id: 'b', freeMorsels: 2 }] });
 *   // copy 1: donors ['b', 'a'] — morsels 0,2 on a then b; 1,3 on b then a. placed 2.
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
      const donorsOf = slotDonors(extents, e);
      const list = copySlots(e, c, donorsOf, trial);
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

/** Donors of each slot of extent `e` over the copies placed so far (same range as `e`). */
function slotDonors(placed: readonly Extent[], e: Extent): Set<string>[] {
  const slots = e.donors.map(() => new Set<string>());
  for (const x of placed) {
    if (x.first !== e.first || x.count !== e.count) continue;
    x.donors.forEach((d, i) => slots[i]!.add(d));
  }
  return slots;
}

/** Donor list of copy `c` of `e`, or null when some slot has no donor left with room. */
function copySlots(
  e: Extent,
  c: number,
  taken: Set<string>[],
  free: Map<string, number>,
): string[] | null {
  const shares = slotShares(e);
  const list: string[] = [];
  for (let i = 0; i < e.donors.length; i++) {
    const need = shares[i]!;
    const fits = (d: string) => !taken[i]!.has(d) && (free.get(d) ?? 0) >= need;
    const rotated = e.donors[(i + c) % e.donors.length]!;
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
