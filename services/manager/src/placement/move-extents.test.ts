import { describe, expect, it } from 'vitest';
import { donorsOfMorsel, type Extent } from '@freeloader/protocol';
import { chunksOf, reassign, unitChunksOf } from './move-extents.js';

const ext = (first: number, count: number, unit: number, donors: string[], phase = 0): Extent => ({
  copy: 0,
  first,
  count,
  unit,
  phase,
  donors,
});

/** Donor of every morsel in [0, n) under the extents. */
const layout = (extents: Extent[], n: number): string[] =>
  Array.from({ length: n }, (_, m) => donorsOfMorsel(extents, m)[0] ?? '-');

describe('chunksOf', () => {
  it.each([
    [
      'one chunk per cycle while under the cap',
      [ext(0, 12, 1, ['a', 'b', 'c'])],
      64,
      [
        [0, 3, [0]],
        [3, 3, [3]],
        [6, 3, [6]],
        [9, 3, [9]],
      ],
    ],
    [
      'cycle-aligned chunks when capped',
      [ext(0, 12, 1, ['a', 'b', 'c'])],
      2,
      [
        [0, 6, [0, 3]],
        [6, 6, [6, 9]],
      ],
    ],
    ['extents without the donor are skipped', [ext(0, 4, 1, ['b', 'c'])], 64, []],
    [
      'stripe units of 2; a tail without the donor is skipped',
      [ext(10, 10, 2, ['b', 'a'])],
      64,
      [
        [10, 4, [12, 13]],
        [14, 4, [16, 17]],
      ],
    ],
  ] as const)('%s', (_name, extents, max, expected) => {
    const chunks = chunksOf(extents, 'a', max);
    expect(chunks.map((c) => [c.first, c.count, c.morsels])).toEqual(expected);
  });
});

describe('unitChunksOf', () => {
  it.each([
    [
      ext(0, 5, 2, ['a', 'b']),
      'a',
      [
        [0, 2, [0, 1]],
        [4, 1, [4]],
      ],
    ],
    [ext(0, 5, 2, ['a', 'b']), 'b', [[2, 2, [2, 3]]]],
    [
      ext(10, 6, 1, ['a', 'b', 'c'], 1),
      'a',
      [
        [12, 1, [12]],
        [15, 1, [15]],
      ],
    ],
    [ext(0, 4, 1, ['b', 'c']), 'a', []],
  ] as const)('%o, donor %s → %o', (e, donor, want) => {
    expect(unitChunksOf([e], donor)).toEqual(
      want.map(([first, count, morsels]) => ({ copy: 0, first, count, morsels })),
    );
  });

  it('finds a target per unit where whole cycles of a declustered twin have none', () => {
    // Copy 1 of a 3-donor stripe, declustered: its cycle rotates over every donor.
    const e = { ...ext(0, 6, 1, ['b', 'c', 'a', 'c', 'a', 'b']), copy: 1 };
    const chunks = unitChunksOf([e], 'a');
    expect(chunks.map((c) => c.morsels)).toEqual([[2], [4]]);
    const moved = reassign([e], 'a', [
      { copy: 1, first: 2, count: 1, to: 'x' },
      { copy: 1, first: 4, count: 1, to: 'y' },
    ]);
    for (let m = 0; m < 6; m++) expect(donorsOfMorsel(moved, m)).not.toContain('a');
    expect(donorsOfMorsel(moved, 2)).toEqual(['x']);
    expect(donorsOfMorsel(moved, 4)).toEqual(['y']);
    expect(donorsOfMorsel(moved, 3)).toEqual(['c']);
  });
});

describe('reassign', () => {
  it.each([
    [
      'one cycle in the middle',
      [ext(0, 9, 1, ['a', 'b', 'c'])],
      [{ copy: 0, first: 3, count: 3, to: 'x' }],
      'abcxbcabc',
      3,
    ],
    [
      'everything of a donor: a plain substitution, one row',
      [ext(0, 9, 1, ['a', 'b', 'c'])],
      [{ copy: 0, first: 0, count: 9, to: 'x' }],
      'xbcxbcxbc',
      1,
    ],
    [
      'to a donor already in the stripe',
      [ext(0, 6, 1, ['a', 'b'])],
      [{ copy: 0, first: 0, count: 6, to: 'b' }],
      'bbbbbb',
      1,
    ],
    [
      'a short tail and a non-zero phase',
      [ext(0, 7, 2, ['a', 'b'], 1)],
      [{ copy: 0, first: 4, count: 3, to: 'x' }],
      'bbaabbx',
      2,
    ],
    [
      'two moves, then the untouched pieces merge back',
      [ext(0, 12, 1, ['a', 'b', 'c'])],
      [
        { copy: 0, first: 0, count: 3, to: 'x' },
        { copy: 0, first: 3, count: 3, to: 'x' },
      ],
      'xbcxbcabcabc',
      2,
    ],
  ])('%s', (_name, extents, moves, expected, rows) => {
    const out = reassign(extents, 'a', moves);
    expect(layout(out, expected.length).join('')).toBe(expected);
    expect(out).toHaveLength(rows);
  });

  it('keeps a moved unit of a long (declustered) list to the one slot it uses', () => {
    // Copy 1 of a 3-wide stripe, declustered: 2 cycles, list b c a | c a b.
    const long = ext(0, 12, 1, ['b', 'c', 'a', 'c', 'a', 'b']);
    const before = layout([long], 12).join('');
    const out = reassign([long], 'a', [{ copy: 0, first: 4, count: 1, to: 'x' }]);
    expect(layout(out, 12).join('')).toBe(before.slice(0, 4) + 'x' + before.slice(5));
    expect(out.find((e) => e.first === 4)).toMatchObject({ count: 1, phase: 0, donors: ['x'] });
    // The tail keeps the full list (it spans more than a cycle): every morsel where it was.
    expect(out.find((e) => e.first === 5)!.donors).toHaveLength(6);
  });

  it('refuses a run no extent holds', () => {
    expect(() =>
      reassign([ext(0, 4, 1, ['a'])], 'a', [{ copy: 0, first: 2, count: 4, to: 'x' }]),
    ).toThrow(/no extent holds/);
  });
});
