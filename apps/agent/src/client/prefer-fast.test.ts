import { describe, expect, it } from 'vitest';
import type { DatasetMap } from '@freeloader/protocol';
import { COPY_A as A, COPY_B as B, twoCopiesMap as twoCopies } from '../test/two-copies-map.js';
import { DatasetReader } from './dataset-reader.js';
import { slowness } from './prefer-fast.js';

const C = '00000000-0000-4000-8000-00000000000c';

describe('slowness', () => {
  it.each<[string, string, Record<string, number>, number]>([
    ['the fastest copy', A, { [A]: 100, [B]: 10 }, 0],
    ['a tenth as fast', B, { [A]: 100, [B]: 10 }, 0.225],
    ['no prediction sits in the middle', C, { [A]: 100 }, 0.125],
    ['nobody predicted', A, {}, 0.125],
  ])('%s', (_, donor, rates, want) => {
    expect(slowness(donor, [A, B, C], new Map(Object.entries(rates)))).toBeCloseTo(want, 9);
  });
});

describe('DatasetReader.candidates with more than one copy', () => {
  const live = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    url: 'http://127.0.0.1:9',
    state: 'live',
    ...extra,
  });
  it.each<[string, DatasetMap['donors'], string[]]>([
    ['primary first when nothing is known', [live(A), live(B)], [A, B]],
    ['the faster copy first', [live(A, { rate: 5e6 }), live(B, { rate: 50e6 })], [B, A]],
    [
      'an unthrottled copy beats a faster throttled one',
      [live(A, { rate: 5e6 }), live(B, { rate: 50e6, throttle: 'active' })],
      [A, B],
    ],
    [
      'a live copy beats a faster stale one',
      [live(A, { rate: 5e6 }), { ...live(B, { rate: 50e6 }), state: 'stale' }],
      [A, B],
    ],
  ])('%s', async (_, donors, order) => {
    const reader = new DatasetReader(twoCopies(donors));
    try {
      expect(reader.candidates(2)).toEqual(order);
    } finally {
      await reader.close();
    }
  });
});
