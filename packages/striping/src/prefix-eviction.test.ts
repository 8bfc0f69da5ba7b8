import { describe, expect, it } from 'vitest';
import { bytesOverWatermark, planEviction, type CachedDataset } from './prefix-eviction.js';

// name: [cached, model prefix, last access, pinned]
type Row = [number, number, number, boolean?];
const cache = (rows: Record<string, Row>): CachedDataset[] =>
  Object.entries(rows).map(([id, [cachedBytes, prefixBytes, lastAccess, pinned]]) => ({
    id,
    cachedBytes,
    prefixBytes,
    lastAccess,
    pinned: pinned ?? false,
  }));

describe('planEviction: trims by LRU first, then whole prefixes by LRU', () => {
  it.each<[string, Record<string, Row>, number, string[], number]>([
    ['nothing needed', { a: [100, 30, 1] }, 0, [], 0],
    ['one trim suffices', { a: [100, 30, 1], b: [100, 30, 2] }, 50, ['trim a →30'], 70],
    // Trims go least recently used first, and all trims come before any eviction.
    [
      'trims in LRU order before evictions',
      { new: [100, 40, 9], old: [100, 40, 1], mid: [100, 40, 5] },
      150,
      ['trim old →40', 'trim mid →40', 'trim new →40'],
      180,
    ],
    [
      'then evicts whole prefixes by LRU',
      { a: [100, 40, 3], b: [50, 50, 1], c: [60, 60, 2] },
      150,
      ['trim a →40', 'evict b →0', 'evict c →0'],
      170,
    ],
    // Datasets already at (or under) their prefix are not trimmed, only evicted.
    [
      'a dataset under its prefix is only evicted',
      { short: [20, 80, 1], long: [100, 50, 2] },
      60,
      ['trim long →50', 'evict short →0'],
      70,
    ],
    // A trimmed dataset can still be evicted whole when trims are not enough.
    ['trimmed then evicted', { a: [100, 40, 1] }, 90, ['trim a →40', 'evict a →0'], 100],
    // Pinned datasets are never touched, however old.
    [
      'pinned is never evicted',
      { pin: [500, 10, 0, true], a: [100, 100, 5] },
      200,
      ['evict a →0'],
      100,
    ],
    // Same access time: by id, so plans are reproducible.
    ['ties break by id', { b: [10, 0, 1], a: [10, 0, 1] }, 15, ['trim a →0', 'trim b →0'], 20],
    ['empty cache', {}, 10, [], 0],
  ])('%s', (_name, rows, need, expected, freed) => {
    const plan = planEviction(cache(rows), need);
    expect(plan.steps.map((s) => `${s.kind} ${s.id} →${s.toBytes}`)).toEqual(expected);
    expect(plan.freedBytes).toBe(freed);
    expect(plan.enough).toBe(freed >= need);
    expect(plan.steps.reduce((s, x) => s + x.freedBytes, 0)).toBe(freed);
  });
});

describe('bytesOverWatermark', () => {
  it.each([
    [80, 100, 0.9, 0.75, 0],
    [90, 100, 0.9, 0.75, 0],
    [95, 100, 0.9, 0.75, 20],
    [100, 100, 0.9, 0.5, 50],
    [10, 0, 0.9, 0.75, 0],
  ])('used %d of %d, high %f, low %f → %d', (used, cap, high, low, expected) => {
    expect(bytesOverWatermark(used, cap, high, low)).toBe(expected);
  });
});
