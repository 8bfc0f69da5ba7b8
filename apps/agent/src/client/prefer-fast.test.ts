import { describe, expect, it } from 'vitest';
import { MiB, type DatasetMap, type DatasetView, type Extent } from '@freeloader/protocol';
import { DatasetReader } from './dataset-reader.js';
import { slowness } from './prefer-fast.js';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
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

/** A map with two full copies: copy 0 on A, copy 1 on B. */
function twoCopies(donors: DatasetMap['donors']): DatasetMap {
  const dataset = {
    id: '00000000-0000-4000-8000-000000000001',
    sizeBytes: 4 * MiB,
    morselSize: MiB,
  } as DatasetView;
  const extent = (copy: number, id: string): Extent => ({
    copy,
    first: 0,
    count: 4,
    unit: 1,
    phase: 0,
    donors: [id],
  });
  return {
    dataset,
    extents: [extent(0, A), extent(1, B)],
    donors,
    hashes: '0'.repeat(4 * 64),
    capability: 'x',
    capabilityExpiresAt: new Date().toISOString(),
  };
}

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
