import { describe, expect, it } from 'vitest';
import { ownedCount, ownerSlot, requestsOf } from './stripe.js';

const M = 1024;
const nodes = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `n${i}`, url: '' }));

describe('suffix striping', () => {
  it.each([
    [10, 10, 3, 0],
    [12, 10, 3, 2],
    [13, 10, 3, 0],
  ])('morsel %d of a suffix from %d over %d nodes is served by slot %d', (m, first, p, slot) => {
    expect(ownerSlot(m, first, p)).toBe(slot);
  });

  it.each([
    [10, 20, 3, 0, 4],
    [10, 20, 3, 1, 3],
    [10, 20, 3, 2, 3],
    [10, 11, 3, 2, 0],
    [5, 5, 2, 0, 0],
  ])('[%d, %d) over %d nodes: slot %d serves %d', (first, end, p, slot, n) => {
    expect(ownedCount(first, end, p, slot)).toBe(n);
    // Consistent with ownerSlot.
    const brute = Array.from({ length: end - first }, (_, i) => first + i).filter(
      (m) => ownerSlot(m, first, p) === slot,
    ).length;
    expect(brute).toBe(n);
  });

  it.each<[number, number, number, number, number, Array<[number, number]>]>([
    [
      10,
      20,
      4,
      2,
      0,
      [
        [10, 14],
        [18, 20],
      ],
    ],
    [10, 20, 4, 2, 1, [[14, 18]]],
    [0, 5, 8, 3, 1, []],
    [
      0,
      5,
      1,
      3,
      1,
      [
        [1, 2],
        [4, 5],
      ],
    ],
  ])(
    '[%d, %d) in requests of %d morsels over %d nodes: slot %d downloads %j',
    (first, end, per, p, slot, ranges) => {
      const plan = { firstMorsel: first, endMorsel: end, requestSize: per * M, nodes: nodes(p) };
      expect(requestsOf(plan, M, slot)).toEqual(ranges);
    },
  );

  it('covers every morsel of the suffix exactly once across the slots', () => {
    const plan = { firstMorsel: 7, endMorsel: 103, requestSize: 5 * M, nodes: nodes(4) };
    const seen = [0, 1, 2, 3]
      .flatMap((s) => requestsOf(plan, M, s))
      .flatMap(([a, b]) => Array.from({ length: b - a }, (_, i) => a + i))
      .sort((a, b) => a - b);
    expect(seen).toEqual(Array.from({ length: 96 }, (_, i) => 7 + i));
  });
});
