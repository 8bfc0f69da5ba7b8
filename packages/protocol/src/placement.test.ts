import { describe, expect, it } from 'vitest';
import {
  donorOf,
  donorsOfMorsel,
  morselCount,
  morselLength,
  morselsOfDonor,
  type Extent,
} from './placement.js';

const ext = (p: Partial<Extent>): Extent => ({
  copy: 0,
  first: 0,
  count: 10,
  unit: 1,
  phase: 0,
  donors: ['A', 'B', 'C'],
  ...p,
});

describe('extents', () => {
  it.each([
    [ext({}), 0, 'A'],
    [ext({}), 4, 'B'],
    [ext({ unit: 2 }), 3, 'B'],
    [ext({ unit: 2 }), 4, 'C'],
    [ext({ first: 5, phase: 1 }), 5, 'B'],
    [ext({ first: 5, phase: 2 }), 7, 'B'],
  ])('%o morsel %i → %s', (e, m, donor) => expect(donorOf(e, m)).toBe(donor));

  it('splitting an extent with phase keeps the remaining morsels in place', () => {
    const whole = ext({ count: 12 });
    // move morsel 5 to donor D: [0,5) unchanged, [5,6) on D, [6,12) with phase 6 mod 3
    const parts = [
      ext({ count: 5 }),
      ext({ first: 5, count: 1, donors: ['D'] }),
      ext({ first: 6, count: 6, phase: 6 % 3 }),
    ];
    for (let m = 0; m < 12; m++) {
      expect(donorsOfMorsel(parts, m)).toEqual([m === 5 ? 'D' : donorOf(whole, m)]);
    }
  });

  it('lists copies primary first', () => {
    const list = [ext({ copy: 1, donors: ['X'] }), ext({})];
    expect(donorsOfMorsel(list, 1)).toEqual(['B', 'X']);
  });

  it('lists a donor’s morsels', () => expect(morselsOfDonor(ext({}), 'C')).toEqual([2, 5, 8]));

  it('rejects morsels outside the extent', () =>
    expect(() => donorOf(ext({}), 10)).toThrow(RangeError));

  it.each([
    [0, 1024, 0],
    [1, 1024, 1],
    [2048, 1024, 2],
    [2049, 1024, 3],
  ])('size %i / %i → %i morsels', (size, ms, n) => expect(morselCount(size, ms)).toBe(n));

  it('last morsel is short', () => {
    expect(morselLength(2049, 1024, 2)).toBe(1);
    expect(morselLength(2049, 1024, 1)).toBe(1024);
    expect(morselLength(2048, 1024, 2)).toBe(0);
  });
});
