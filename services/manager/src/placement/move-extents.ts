import { FreeLoaderError, morselsOfDonor, type Extent } from '@freeloader/protocol';

/** Most chunks one extent is cut into when planning a move (keeps plans and rows small). */
export const MAX_CHUNKS_PER_EXTENT = 64;

/** A run of whole stripe cycles of one extent, and the morsels `donor` holds in it. */
export interface Chunk {
  copy: number;
  first: number;
  count: number;
  /** Morsels of the donor being relieved inside this chunk, ascending. */
  morsels: number[];
}

/**
 * Cut every extent naming `donor` into runs of whole stripe cycles (unit × donors.length
 * morsels): a run that starts on a cycle boundary keeps the extent's phase, so moving it is
 * just a donor substitution. Chunks where `donor` holds nothing are left out.
 *
 * @example
 *   chunksOf([{copy:0,first:0,count:12,unit:1,phase:0,donors:['a','b','c']}], 'a')
 *   // → [0,3) [0] · [3,6) [3] · [6,9) [6] · [9,12) [9]: one cycle each while under maxChunks
 */
export function chunksOf(
  extents: readonly Extent[],
  donor: string,
  maxChunks = MAX_CHUNKS_PER_EXTENT,
): Chunk[] {
  const out: Chunk[] = [];
  for (const e of extents) {
    if (!e.donors.includes(donor)) continue;
    const cycle = e.unit * e.donors.length;
    const cycles = Math.ceil(e.count / cycle);
    const per = Math.max(1, Math.ceil(cycles / maxChunks)) * cycle;
    for (let first = e.first; first < e.first + e.count; first += per) {
      const count = Math.min(per, e.first + e.count - first);
      const morsels = morselsOfDonor({ ...e, first, count }, donor);
      if (morsels.length > 0) out.push({ copy: e.copy, first, count, morsels });
    }
  }
  return out;
}

/**
 * One chunk per stripe unit `donor` holds: the finest cut a move can make. A chunk of whole
 * cycles of a declustered copy has its morsels' other copies on every other donor, so no
 * target can take it; a single unit's twins sit on n − 1 donors only.
 *
 * @example
 *   unitChunksOf([{copy:0,first:0,count:5,unit:2,phase:0,donors:['a','b']}], 'a')
 *   // → [0,2) [0,1] · [4,5) [4]
 */
export function unitChunksOf(extents: readonly Extent[], donor: string): Chunk[] {
  const out: Chunk[] = [];
  for (const e of extents) {
    if (!e.donors.includes(donor)) continue;
    for (let u = 0; u * e.unit < e.count; u++) {
      if (e.donors[(e.phase + u) % e.donors.length] !== donor) continue;
      const first = e.first + u * e.unit;
      const count = Math.min(e.unit, e.first + e.count - first);
      out.push({ copy: e.copy, first, count, morsels: range(first, count) });
    }
  }
  return out;
}

const range = (first: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => first + i);

/** Move chunk [first, first+count) of `copy` from donor `from` to donor `to`. */
export interface Reassignment {
  copy: number;
  first: number;
  count: number;
  to: string;
}

/**
 * New extents with each reassigned run's `from` replaced by its target. Runs must start and end
 * on stripe-unit boundaries of the extent containing them (chunksOf's do); the extent is split
 * around the run, each piece's phase adjusted so every other morsel keeps its donor, and
 * neighbouring pieces with identical donors are merged back.
 *
 * @example
 *   reassign([{copy:0,first:0,count:6,unit:1,phase:0,donors:['a','b']}], 'a',
 *            [{copy:0,first:2,count:2,to:'x'}])
 *   // → [0,2) a,b · [2,4) x,b · [4,6) a,b  (morsel 2 now on x, every other morsel unchanged)
 */
export function reassign(
  extents: readonly Extent[],
  from: string,
  moves: readonly Reassignment[],
): Extent[] {
  let out = extents.map((e) => ({ ...e, donors: [...e.donors] }));
  for (const m of moves) {
    const i = out.findIndex(
      (e) => e.copy === m.copy && m.first >= e.first && m.first + m.count <= e.first + e.count,
    );
    if (i < 0) {
      throw new FreeLoaderError(
        'CONFLICT',
        `no extent holds morsels [${m.first}, ${m.first + m.count})`,
      );
    }
    const e = out[i]!;
    const run = slice(e, m.first, m.first + m.count)!;
    const pieces = [
      slice(e, e.first, m.first),
      { ...run, donors: run.donors.map((d) => (d === from ? m.to : d)) },
      slice(e, m.first + m.count, e.first + e.count),
    ].filter((p): p is Extent => p !== undefined);
    out = [...out.slice(0, i), ...pieces, ...out.slice(i + 1)];
  }
  return merge(out);
}

/**
 * Morsels [start, end) of `e` as an extent of their own (undefined when empty). A piece shorter
 * than a cycle keeps only the slots it uses (phase 0): a repaired unit of a declustered copy
 * (list D × (D − 1) long) is then a one-donor extent, not 30 donors rewritten at every commit.
 */
function slice(e: Extent, start: number, end: number): Extent | undefined {
  if (end <= start) return undefined;
  if (
    (start - e.first) % e.unit !== 0 ||
    ((end - e.first) % e.unit !== 0 && end !== e.first + e.count)
  ) {
    throw new FreeLoaderError(
      'CONFLICT',
      `cannot split an extent inside a stripe unit at ${start}`,
    );
  }
  const phase = (e.phase + (start - e.first) / e.unit) % e.donors.length;
  const units = Math.ceil((end - start) / e.unit);
  if (units >= e.donors.length) {
    return { ...e, first: start, count: end - start, phase, donors: [...e.donors] };
  }
  const donors = Array.from({ length: units }, (_, i) => e.donors[(phase + i) % e.donors.length]!);
  return { ...e, first: start, count: end - start, phase: 0, donors };
}

/** Join adjacent extents of one copy that continue each other's stripe exactly. */
function merge(extents: Extent[]): Extent[] {
  const sorted = [...extents].sort((a, b) => a.copy - b.copy || a.first - b.first);
  const out: Extent[] = [];
  for (const e of sorted) {
    const prev = out.at(-1);
    const continues =
      prev !== undefined &&
      prev.copy === e.copy &&
      prev.first + prev.count === e.first &&
      prev.unit === e.unit &&
      prev.count % prev.unit === 0 &&
      prev.donors.length === e.donors.length &&
      prev.donors.every((d, k) => d === e.donors[k]) &&
      (prev.phase + prev.count / prev.unit) % prev.donors.length === e.phase;
    if (continues) prev.count += e.count;
    else out.push({ ...e });
  }
  return out;
}
