import { describe, expect, it } from 'vitest';
import { modelThroughput, optimalLocalShare } from './throughput-model.js';

describe('modelThroughput', () => {
  it.each<[string, number, number, number, number, number]>([
    ['remote only (0:8) is thpt_r', 0, 8, 60, 95, 95],
    ['local only (1:0) is thpt_l', 1, 0, 60, 95, 60],
    ["the seed's 3:8, remote-bound", 3, 8, 60, 95, 11 / (8 / 95)],
    ['local-bound beyond the peak', 8, 8, 60, 95, 16 / (8 / 60)],
    ['at the optimum it is thpt_l + thpt_r', 60, 95, 60, 95, 155],
    ['a dead local disk with nothing local does not matter', 0, 5, 0, 12, 12],
    ['a dead path with data on it takes forever', 1, 5, 0, 12, 0],
  ])('%s', (_, sl, sr, tl, tr, want) => {
    expect(modelThroughput(sl, sr, tl, tr)).toBeCloseTo(want, 9);
  });

  it('peaks at optimalLocalShare and falls on both sides', () => {
    const [tl, tr] = [30, 11.9];
    const f = optimalLocalShare(tl, tr);
    const at = (x: number) => modelThroughput(x, 1 - x, tl, tr);
    expect(at(f)).toBeCloseTo(tl + tr, 9);
    for (const d of [0.05, 0.2]) {
      expect(at(f - d)).toBeLessThan(at(f));
      expect(at(Math.min(1, f + d))).toBeLessThan(at(f));
    }
  });

  it.each([
    [-1, 1, 1, 1],
    [0, 0, 1, 1],
    [1, 1, -5, 1],
    [1, 1, 1, Number.NaN],
  ])('rejects (%s, %s, %s, %s)', (sl, sr, tl, tr) => {
    expect(() => modelThroughput(sl, sr, tl, tr)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
  });
});

describe('optimalLocalShare', () => {
  it.each<[number, number, number]>([
    [60, 95, 60 / 155],
    [30, 11.9, 30 / 41.9],
    [10, 0, 1],
    [0, 10, 0],
  ])('local %s, remote %s → %s', (tl, tr, want) => {
    expect(optimalLocalShare(tl, tr)).toBeCloseTo(want, 12);
  });

  it('needs some bandwidth somewhere', () => {
    expect(() => optimalLocalShare(0, 0)).toThrow(/invalid rates/);
  });
});
