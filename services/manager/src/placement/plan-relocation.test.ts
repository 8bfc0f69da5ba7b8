import { describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { planRelocation, type HeldDataset, type Target } from './plan-relocation.js';

const ds = (id: string, count: number, donors: string[]): HeldDataset => ({
  id,
  morselSize: MiB,
  sourceUri: `http://src/${id}`,
  extents: [{ copy: 0, first: 0, count, unit: 1, phase: 0, donors }],
});
const t = (id: string, freeMiB: number, throttle?: string): Target => ({
  id,
  url: `http://${id}`,
  freeBytes: freeMiB * MiB,
  ...(throttle ? { throttle } : {}),
});

describe('planRelocation', () => {
  it.each([
    [
      'the biggest share moves first, whole, to a donor not holding it',
      [ds('small', 4, ['a', 'b']), ds('big', 12, ['a', 'b'])],
      [t('b', 100), t('x', 100)],
      3 * MiB,
      { big: { x: 6 * MiB } },
      0,
    ],
    [
      'chunks spread over targets as their free space allows',
      [ds('d', 8, ['a'])],
      [t('x', 5), t('y', 3)],
      8 * MiB,
      { d: { x: 5 * MiB, y: 3 * MiB } },
      0,
    ],
    [
      'throttled targets only when the others are full',
      [ds('d', 4, ['a'])],
      [t('p', 100, 'active'), t('x', 2)],
      4 * MiB,
      { d: { x: 2 * MiB, p: 2 * MiB } },
      0,
    ],
    ['no room anywhere: all remains', [ds('d', 4, ['a'])], [t('x', 0)], 4 * MiB, {}, 4 * MiB],
  ])('%s', (_name, datasets, targets, excess, expected, remaining) => {
    const plan = planRelocation('a', excess, datasets, targets);
    const got = Object.fromEntries(
      plan.moves.map((m) => [m.datasetId, Object.fromEntries(m.bytesPerTarget)]),
    );
    expect(got).toEqual(expected);
    expect(plan.remainingBytes).toBe(remaining);
  });

  it('never moves a copy onto a donor holding another copy of the morsel', () => {
    // Two copies over a,b: a's morsels have their other copy on b, so only x may take them.
    const d: HeldDataset = {
      ...ds('d', 4, ['a', 'b']),
      extents: [
        { copy: 0, first: 0, count: 4, unit: 1, phase: 0, donors: ['a', 'b'] },
        { copy: 1, first: 0, count: 4, unit: 1, phase: 0, donors: ['b', 'a'] },
      ],
    };
    const spread = planRelocation('a', 4 * MiB, [d], [t('b', 100), t('x', 3)]);
    expect(Object.fromEntries(spread.moves[0]!.bytesPerTarget)).toEqual({ x: 3 * MiB });
    expect(spread.remainingBytes).toBe(MiB);
    const none = planRelocation('a', 4 * MiB, [d], [t('b', 100)]);
    expect(none.moves).toEqual([]);
  });

  it('moves declustered copies one stripe unit at a time when whole cycles fit nowhere', () => {
    // Copy 1 rotates over a, b, c: over a cycle, a's copy-0 morsels have twins on b and c.
    const d: HeldDataset = {
      ...ds('d', 6, ['a', 'b', 'c']),
      extents: [
        { copy: 0, first: 0, count: 6, unit: 1, phase: 0, donors: ['a', 'b', 'c'] },
        { copy: 1, first: 0, count: 6, unit: 1, phase: 0, donors: ['b', 'c', 'a', 'c', 'a', 'b'] },
      ],
    };
    const plan = planRelocation('a', 4 * MiB, [d], [t('b', 100), t('c', 100)]);
    const chunks = plan.moves[0]!.chunks.map((c) => [c.copy, c.morsels, c.to]);
    // Morsel 0's twin is on b, 3's on c; copy 1's morsels 2 (twin c) and 4 (twin b).
    expect(chunks).toEqual([
      [0, [0], 'c'],
      [0, [3], 'b'],
      [1, [2], 'b'],
      [1, [4], 'c'],
    ]);
    expect(plan.remainingBytes).toBe(0);
  });

  it('lists datasets it could not move, for eviction', () => {
    const plan = planRelocation('a', 4 * MiB, [ds('d', 4, ['a'])], []);
    expect(plan.unmoved.map((d) => d.id)).toEqual(['d']);
  });
});
