import { describe, expect, it } from 'vitest';
import type { Extent } from '@freeloader/protocol';
import { copiesHeldBy } from './copies-held.js';
import { FaultReportLimit } from './report-limit.js';

/** Morsels 0…5 striped over a and b (copy 0); copy 1 of 0…5 on c alone. */
const extents: Extent[] = [
  { copy: 0, first: 0, count: 6, unit: 1, phase: 0, donors: ['a', 'b'] },
  { copy: 1, first: 0, count: 6, unit: 1, phase: 0, donors: ['c'] },
];

describe('copiesHeldBy', () => {
  it.each([
    ['a holds the even morsels of copy 0', 'a', 2, [0]],
    ['b does not hold morsel 2', 'b', 2, []],
    ['b holds morsel 3', 'b', 3, [0]],
    ['c holds copy 1 of everything', 'c', 5, [1]],
    ['past the end: nobody', 'a', 6, []],
    ['an unknown donor: nothing', 'x', 0, []],
  ])('%s', (_label, donor, morsel, want) => {
    expect(copiesHeldBy(extents, donor, morsel)).toEqual(want);
  });
});

describe('FaultReportLimit', () => {
  it('admits up to the limit per principal per minute, then RATE_LIMITED until the window passes', () => {
    let now = 0;
    const limit = new FaultReportLimit(5, () => now);
    limit.admit('user:alice', 3);
    limit.admit('user:alice', 2);
    expect(() => limit.admit('user:alice', 1)).toThrow(
      expect.objectContaining({ code: 'RATE_LIMITED' }),
    );
    limit.admit('user:bob', 5);
    now = 60_000;
    limit.admit('user:alice', 5);
  });
});
