import { describe, expect, it } from 'vitest';
import { donorOf, type Extent } from '@freeloader/protocol';
import { extentShares, interleave, scaleUnits, tally } from './pattern.js';

const ext = (count: number, unit: number, phase: number, donors: string[], first = 0): Extent => ({
  copy: 0,
  first,
  count,
  unit,
  phase,
  donors,
});

/** Count by walking every morsel through the protocol's donorOf. */
const walk = (e: Extent) => {
  const out = new Map<string, number>();
  for (let m = e.first; m < e.first + e.count; m++) {
    const d = donorOf(e, m);
    out.set(d, (out.get(d) ?? 0) + 1);
  }
  return out;
};

describe('interleave', () => {
  it.each<[string, [string, number][], string]>([
    [
      '2:1',
      [
        ['a', 2],
        ['b', 1],
      ],
      'a b a',
    ],
    [
      'equal weights rotate',
      [
        ['a', 1],
        ['b', 1],
        ['c', 1],
      ],
      'a b c',
    ],
    [
      'zero weights are left out',
      [
        ['a', 1],
        ['z', 0],
        ['b', 1],
      ],
      'a b',
    ],
    [
      '3:1:1',
      [
        ['a', 3],
        ['b', 1],
        ['c', 1],
      ],
      'a b a c a',
    ],
  ])('%s', (_, weights, want) => {
    expect(interleave(weights).join(' ')).toBe(want);
  });

  it('gives every donor exactly its weight and never bunches a heavy donor', () => {
    const weights: [string, number][] = [
      ['a', 41],
      ['b', 80],
      ['c', 103],
      ['d', 24],
    ];
    const cycle = interleave(weights);
    for (const [id, w] of weights) expect(cycle.filter((x) => x === id)).toHaveLength(w);
    // the lightest donor (1 in ~10 slots) never appears twice within 5 slots
    const at = cycle.flatMap((x, i) => (x === 'd' ? [i] : []));
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(5);
  });
});

describe('extentShares / tally', () => {
  it.each<[string, Extent]>([
    ['plain round-robin', ext(10, 1, 0, ['a', 'b', 'c'])],
    ['repeated donors', ext(7, 1, 0, ['a', 'b', 'a'])],
    ['unit and phase', ext(23, 3, 2, ['a', 'b', 'a', 'c'])],
    ['count shorter than a cycle', ext(5, 4, 1, ['a', 'b', 'c'])],
    ['offset first', ext(9, 2, 0, ['x', 'y'], 100)],
  ])('%s matches donorOf morsel by morsel', (_, e) => {
    expect(extentShares(e)).toEqual(walk(e));
  });

  it('tally sums over extents', () => {
    const es = [ext(4, 1, 0, ['a', 'b']), ext(3, 1, 0, ['a'], 4)];
    expect(Object.fromEntries(tally(es))).toEqual({ a: 5, b: 2 });
  });
});

describe('scaleUnits', () => {
  it('scales unit-space extents to morsels and clips the short last unit', () => {
    const unitSpace = [ext(3, 1, 0, ['a', 'b']), ext(2, 1, 0, ['c'], 3)];
    const scaled = scaleUnits(unitSpace, 4, 18);
    expect(scaled).toEqual([ext(12, 4, 0, ['a', 'b']), ext(6, 4, 0, ['c'], 12)]);
    expect(Object.fromEntries(tally(scaled))).toEqual({ a: 8, b: 4, c: 6 });
  });
});
