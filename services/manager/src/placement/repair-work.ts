import { donorOf, morselCount, morselLength, type Extent } from '@freeloader/protocol';

/** Why a unit needs repair (the order of this list is also its rank among equal dangers). */
export type RepairReason = 'missing' | 'lost' | 'revoked' | 'fault' | 'leaving';
/** How a departing donor is going: its copies are all re-created elsewhere. */
export type Departure = 'lost' | 'leaving' | 'revoked';

/** A run of one copy of one dataset to re-create, and how endangered its morsels are. */
export interface RepairWork {
  copy: number;
  first: number;
  count: number;
  /** The donor whose copy is replaced; null when the copy is missing (added). */
  from: string | null;
  reason: RepairReason;
  /** The morsels of the run to fetch, ascending. */
  morsels: number[];
  bytes: number;
  /** Fewest readable, unfaulted copies of any of its morsels (the danger: 0 is source-only). */
  liveCopies: number;
}

export interface RepairScan {
  sizeBytes: number;
  /** Bytes the copies cover (the cached prefix; the whole dataset unless prefix caching cut it). */
  cachedBytes: number;
  morselSize: number;
  /** Wanted copies (`datasets.replicas`). */
  replicas: number;
  extents: readonly Extent[];
  departing: ReadonlyMap<string, Departure>;
  /** Whether a donor's copies can be read now (live, not lost or revoked). */
  readable: (agentId: string) => boolean;
  faults: ReadonlyArray<{ copy: number; morsel: number; agentId: string }>;
}

/**
 * Every unit of repair one dataset needs, each a stripe unit (a run of morsels one donor holds
 * in one copy, so a commit is a donor substitution and a destination holding none of its morsels
 * exists whenever one holds none of a single morsel): the units departing donors hold, the units
 * holding a faulty copy, and runs of copies below `replicas` that no extent covers, cut along
 * another copy's stripe units. Also the fault rows that name a copy
 * placement no longer puts there (`staleFaults`, for the caller to drop).
 *
 * @example
 *   repairWorkOf({ sizeBytes: 4, cachedBytes: 4, morselSize: 1, replicas: 2, departing: new Map(),
 *     extents: [{ copy: 0, first: 0, count: 4, unit: 1, phase: 0, donors: ['a', 'b'] }],
 *     readable: () => true, faults: [] })
 *   // → four 'missing' units of one morsel (copy 1; copy 0's stripe unit is 1), liveCopies 1
 */
export function repairWorkOf(scan: RepairScan): {
  work: RepairWork[];
  staleFaults: Array<{ copy: number; morsel: number }>;
} {
  const n = morselCount(scan.cachedBytes, scan.morselSize);
  const faulty = new Set(scan.faults.map((f) => `${f.copy}:${f.morsel}`));
  const live = (m: number): number =>
    scan.extents.filter(
      (e) =>
        m >= e.first &&
        m < e.first + e.count &&
        !faulty.has(`${e.copy}:${m}`) &&
        scan.readable(donorOf(e, m)),
    ).length;
  const unit = (
    copy: number,
    first: number,
    count: number,
    from: string | null,
    reason: RepairReason,
    morsels: number[],
  ): RepairWork => ({
    copy,
    first,
    count,
    from,
    reason,
    morsels,
    bytes: morsels.reduce((s, m) => s + morselLength(scan.sizeBytes, scan.morselSize, m), 0),
    liveCopies: Math.min(...morsels.map(live)),
  });

  const work: RepairWork[] = [];
  for (const [donor, how] of scan.departing) {
    for (const e of scan.extents) {
      if (!e.donors.includes(donor)) continue;
      for (const [first, count] of stripeUnits(e, e.first, e.first + e.count)) {
        if (donorOf(e, first) === donor) {
          work.push(unit(e.copy, first, count, donor, how, range(first, count)));
        }
      }
    }
  }
  const staleFaults: Array<{ copy: number; morsel: number }> = [];
  const seen = new Set(work.map((w) => `${w.copy}:${w.first}`));
  for (const f of scan.faults) {
    const e = extentOf(scan.extents, f.copy, f.morsel);
    if (!e || donorOf(e, f.morsel) !== f.agentId) {
      staleFaults.push({ copy: f.copy, morsel: f.morsel });
      continue;
    }
    if (scan.departing.has(f.agentId)) continue;
    const [[first, count]] = stripeUnits(e, f.morsel, f.morsel + 1) as [[number, number]];
    if (seen.has(`${f.copy}:${first}`)) continue;
    seen.add(`${f.copy}:${first}`);
    work.push(unit(f.copy, first, count, f.agentId, 'fault', range(first, count)));
  }
  for (let copy = 0; copy < scan.replicas; copy++) {
    for (const [start, end] of gaps(scan.extents, copy, n)) {
      for (let s = start; s < end;) {
        // Runs follow another copy's stripe units: each then has one donor there, so a single
        // destination that holds none of the run's morsels can always be found.
        const ref = scan.extents.find(
          (e) => e.copy !== copy && s >= e.first && s < e.first + e.count,
        );
        const [unitFirst, unitCount] = ref ? stripeUnits(ref, s, s + 1)[0]! : [s, 1];
        const count = Math.min(end - s, unitFirst + unitCount - s);
        work.push(unit(copy, s, count, null, 'missing', range(s, count)));
        s += count;
      }
    }
  }
  return { work, staleFaults };
}

/**
 * The stripe units of `e` that meet morsels [from, to), as [first, count] runs (each on one
 * donor), clipped to the extent but not to [from, to).
 */
export function stripeUnits(e: Extent, from: number, to: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const end = e.first + e.count;
  let s = e.first + Math.floor((Math.max(from, e.first) - e.first) / e.unit) * e.unit;
  for (; s < Math.min(to, end); s += e.unit) out.push([s, Math.min(e.unit, end - s)]);
  return out;
}

function extentOf(extents: readonly Extent[], copy: number, m: number): Extent | undefined {
  return extents.find((x) => x.copy === copy && m >= x.first && m < x.first + x.count);
}

/** [start, end) runs of morsels [0, n) that no extent of `copy` covers. */
function gaps(extents: readonly Extent[], copy: number, n: number): Array<[number, number]> {
  const mine = extents.filter((e) => e.copy === copy).sort((a, b) => a.first - b.first);
  const out: Array<[number, number]> = [];
  let at = 0;
  for (const e of mine) {
    if (e.first > at) out.push([at, Math.min(e.first, n)]);
    at = Math.max(at, e.first + e.count);
  }
  if (at < n) out.push([at, n]);
  return out.filter(([a, b]) => b > a);
}

function range(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}

const REASON_RANK: Record<RepairReason, number> = {
  missing: 0,
  lost: 1,
  revoked: 2,
  fault: 3,
  leaving: 4,
};

/**
 * The repair queue's order, by danger as Storj orders segments by health: fewest live copies
 * first (a morsel only the source still has before one with a copy left), then copies gone for
 * good before a leaving donor's (still readable), then oldest first.
 *
 * @example
 *   [{ liveCopies: 1, reason: 'lost', enqueuedAt: 1 }, { liveCopies: 0, reason: 'fault', enqueuedAt: 2 }]
 *     .sort(byDanger)  // → the liveCopies 0 unit first
 */
export function byDanger(
  a: { liveCopies: number; reason: RepairReason; enqueuedAt: number },
  b: { liveCopies: number; reason: RepairReason; enqueuedAt: number },
): number {
  return (
    a.liveCopies - b.liveCopies ||
    REASON_RANK[a.reason] - REASON_RANK[b.reason] ||
    a.enqueuedAt - b.enqueuedAt
  );
}
