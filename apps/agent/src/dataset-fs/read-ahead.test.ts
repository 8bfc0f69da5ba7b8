import { describe, expect, it } from 'vitest';
import { ReadAhead } from './read-ahead.js';

const M = 1 << 20;
const K128 = 128 << 10;

describe('ReadAhead', () => {
  it.each([
    ['first read at 0 starts a small window', [[0, K128]], [[1, 3]]],
    [
      'the window grows with the streak (2 MiB in 128 KiB reads)',
      Array.from({ length: 16 }, (_, i) => [i * K128, K128]),
      [
        [1, 3],
        [3, 5],
        [5, 6],
      ],
    ],
    ['a first read elsewhere is random', [[5 * M, K128]], []],
    [
      'a jump back resets',
      [
        [0, K128],
        [K128, K128],
        [0, K128],
      ],
      [[1, 3]],
    ],
    [
      'a jump far ahead resets',
      [
        [0, K128],
        [10 * M, K128],
      ],
      [[1, 3]],
    ],
    [
      'a small skip forward stays sequential',
      [
        [0, M],
        [M + 4096, K128],
      ],
      [
        [1, 3],
        [3, 5],
      ],
    ],
    [
      'never past the last morsel',
      Array.from({ length: 9 }, (_, i) => [i * M, M]),
      [
        [1, 3],
        [3, 6],
        [6, 7],
        [7, 8],
        [8, 9],
      ],
    ],
  ])('%s', (_name, reads, expected) => {
    const ra = new ReadAhead({ morselSize: M, morselCount: 9, maxMorsels: 4 });
    const got: [number, number][] = [];
    for (const [pos, len] of reads as [number, number][]) {
      const want = ra.onRead(pos, len);
      if (want) {
        got.push([want.from, want.to]);
        ra.issued(want.to);
      }
    }
    expect(got).toEqual(expected);
  });

  it('caps the window at maxMorsels and asks only for what is new', () => {
    const ra = new ReadAhead({ morselSize: M, morselCount: 100, maxMorsels: 8 });
    const got: ({ from: number; to: number } | undefined)[] = [];
    for (let i = 0; i < 12; i++) {
      const w = ra.onRead(i * M, M);
      got.push(w);
      if (w) ra.issued(w.to);
    }
    expect(got.slice(0, 3)).toEqual([
      { from: 1, to: 3 },
      { from: 3, to: 6 },
      { from: 6, to: 9 },
    ]);
    expect(got[3]).toEqual({ from: 9, to: 12 });
    // From then on each 1 MiB read asks for exactly one new morsel, 8 ahead of the read.
    expect(got.slice(4)).toEqual(
      Array.from({ length: 8 }, (_, i) => ({ from: 12 + i, to: 13 + i })),
    );
  });

  it.each([
    // After the first whole morsel the window jumps to streamMorsels (capped by maxMorsels).
    ['streaming', { maxMorsels: 64, streamMorsels: 36 }, [1, 3], [3, 38]],
    ['streaming, capped', { maxMorsels: 20, streamMorsels: 36 }, [1, 3], [3, 22]],
    ['without streamMorsels', { maxMorsels: 64 }, [1, 3], [3, 6]],
  ])('a reader past its first morsel gets the %s window', (_name, opts, first, second) => {
    const ra = new ReadAhead({ morselSize: M, morselCount: 100, ...opts });
    const got: [number, number][] = [];
    for (const pos of [0, M]) {
      const w = ra.onRead(pos, M);
      if (w) {
        got.push([w.from, w.to]);
        ra.issued(w.to);
      }
    }
    expect(got).toEqual([first, second]);
  });

  it('a header sniff (one small read) does not get the streaming window', () => {
    const ra = new ReadAhead({
      morselSize: M,
      morselCount: 100,
      maxMorsels: 64,
      streamMorsels: 36,
    });
    expect(ra.onRead(0, 4096)).toEqual({ from: 1, to: 3 });
  });

  it('prefetches nothing when the budget is zero', () => {
    const ra = new ReadAhead({ morselSize: M, morselCount: 100, maxMorsels: 0 });
    expect(ra.onRead(0, M)).toBeUndefined();
    expect(ra.onRead(M, M)).toBeUndefined();
  });
});
