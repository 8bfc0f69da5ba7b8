import type { Extent } from '@freeloader/protocol';

/**
 * Uneven stripes without a new extent kind: an extent's `donors` may name a donor more than once.
 * `donorOf` is unchanged — stripe s goes to donors[(s + phase) % donors.length] — so a donor
 * listed k times in a cycle of n slots holds k/n of the extent. The predictive and asymmetric
 * policies build such cycles ("patterns") with {@link interleave}; every reader, import job and
 * map consumer that goes through `donorOf` handles them as they are.
 */

/**
 * Spread weighted donors over one cycle as evenly as possible (smooth weighted round robin):
 * a donor with weight k gets exactly k slots, and its slots are scattered, not bunched, so a
 * sequential reader keeps every donor busy.
 *
 * @example
 *   interleave([['host', 3], ['a', 1], ['b', 1], ['c', 1], ['d', 1], ['e', 1], ['f', 1], ['g', 1], ['h', 1]])
 *   // → 11 slots, 'host' at 3 positions spread over the cycle, a…h once each (seed's 3:8 ratio)
 *   interleave([['a', 2], ['b', 1]]) // → ['a', 'b', 'a']
 */
export function interleave(weights: ReadonlyArray<readonly [string, number]>): string[] {
  const live = weights.filter(([, w]) => w > 0);
  const total = live.reduce((s, [, w]) => s + w, 0);
  const current = live.map(() => 0);
  const out: string[] = [];
  for (let slot = 0; slot < total; slot++) {
    let best = 0;
    for (let i = 0; i < live.length; i++) {
      current[i]! += live[i]![1];
      if (current[i]! > current[best]!) best = i;
    }
    current[best]! -= total;
    out.push(live[best]![0]);
  }
  return out;
}

/**
 * Morsels each donor receives from one extent (a donor listed several times counts every slot).
 * Whole cycles are multiplied, only the last partial cycle is walked, so this is cheap for huge
 * extents.
 *
 * @example extentShares({ copy: 0, first: 0, count: 7, unit: 1, phase: 0, donors: ['a', 'b', 'a'] })
 *   // → a: 5, b: 2
 */
export function extentShares(extent: Extent): Map<string, number> {
  const { count, unit, phase, donors } = extent;
  const cycle = unit * donors.length;
  const cycles = Math.floor(count / cycle);
  const out = new Map<string, number>();
  const add = (id: string, n: number): void => {
    if (n > 0) out.set(id, (out.get(id) ?? 0) + n);
  };
  for (const id of donors) add(id, cycles * unit);
  let left = count - cycles * cycle;
  for (let s = 0; left > 0; s++) {
    const n = Math.min(unit, left);
    add(donors[(s + phase) % donors.length]!, n);
    left -= n;
  }
  return out;
}

/** Morsels per donor over a whole placement. */
export function tally(extents: readonly Extent[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of extents) {
    for (const [id, n] of extentShares(e)) out.set(id, (out.get(id) ?? 0) + n);
  }
  return out;
}

/**
 * Turn extents planned in stripe units (one "morsel" = `unit` real morsels) into morsel extents
 * of a `morsels`-long dataset: positions and strides scale by `unit`; the last extent is clipped
 * where the dataset ends (its final unit may be short).
 */
export function scaleUnits(extents: readonly Extent[], unit: number, morsels: number): Extent[] {
  if (unit === 1) return extents.map((e) => ({ ...e }));
  return extents.map((e) => ({
    ...e,
    first: e.first * unit,
    count: Math.min(e.count * unit, morsels - e.first * unit),
    unit: e.unit * unit,
  }));
}
