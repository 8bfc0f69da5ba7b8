import { describe, expect, it } from 'vitest';
import type { Extent, ImportJobPayload } from '@freeloader/protocol';
import { hashWindows } from './fan-out-import.js';
import { splitMorsels } from './ranged-import.js';

const extent = (copy: number, first: number, count: number, donors: string[]): Extent => ({
  copy,
  first,
  count,
  unit: 1,
  phase: 0,
  donors,
});
const fanOut: ImportJobPayload['fanOut'] = { primaries: [], donors: [], readCapability: 'x' };

describe('splitMorsels', () => {
  const extents = [extent(0, 0, 4, ['me', 'b']), extent(1, 0, 4, ['b', 'me'])];

  it('takes copy 0 from the source and fans copies ≥ 1 out', () => {
    expect(splitMorsels({ extents, fanOut }, 'me')).toEqual({
      fromSource: [0, 2],
      fannedOut: [1, 3],
    });
  });

  it('takes every copy from the source without a fan-out', () => {
    expect(splitMorsels({ extents }, 'me')).toEqual({ fromSource: [0, 1, 2, 3], fannedOut: [] });
  });
});

describe('hashWindows', () => {
  it('covers sparse indices with as few windows as the limit allows', () => {
    expect(hashWindows([0, 2, 5000], 4096)).toEqual([
      { first: 0, count: 3 },
      { first: 5000, count: 1 },
    ]);
    expect(hashWindows([4, 5, 9], 4)).toEqual([
      { first: 4, count: 2 },
      { first: 9, count: 1 },
    ]);
    expect(hashWindows([])).toEqual([]);
  });
});
