import { describe, expect, it } from 'vitest';
import { QuotaVersion } from './quota-version.js';

describe('QuotaVersion', () => {
  it.each([
    ['clock moves on', [100, 250], 250],
    ['same millisecond', [100, 100], 101],
    ['clock set back', [100, 40], 101],
  ] as const)('%s', (_name, [start, later], want) => {
    let now: number = start;
    const v = new QuotaVersion(() => now);
    expect(v.current).toBe(start);
    now = later;
    expect(v.bump()).toBe(want);
    expect(v.current).toBe(want);
  });

  it('every bump is above the last', () => {
    const v = new QuotaVersion(() => 7);
    const seen = [v.current, v.bump(), v.bump(), v.bump()];
    expect(seen).toEqual([7, 8, 9, 10]);
  });
});
