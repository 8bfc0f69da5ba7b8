import { describe, expect, it } from 'vitest';
import { FAILURE_MEMORY_MS, RecentFailures } from './recent-failures.js';

describe('RecentFailures', () => {
  it.each<[string, number[], number, number]>([
    ['none', [], 0, 0],
    ['one just now', [0], 0, 1],
    ['one just before it is forgotten', [0], FAILURE_MEMORY_MS - 1, 1],
    ['one forgotten', [0], FAILURE_MEMORY_MS, 0],
    ['the older of two forgotten', [0, 2_000], FAILURE_MEMORY_MS + 1_000, 1],
    ['three within the memory', [0, 10, 20], 100, 3],
  ])('%s', (_, failures, at, want) => {
    let now = 0;
    const f = new RecentFailures(() => now);
    for (const t of failures) {
      now = t;
      f.add('A');
    }
    now = at;
    expect(f.count('A')).toBe(want);
    expect(f.count('B')).toBe(0);
  });

  it('moves its version on a failure and when one is forgotten, not otherwise', () => {
    let now = 0;
    const f = new RecentFailures(() => now);
    const v0 = f.version();
    f.add('A');
    const v1 = f.version();
    expect(v1).not.toBe(v0);
    now = FAILURE_MEMORY_MS - 1;
    expect(f.version()).toBe(v1);
    now = FAILURE_MEMORY_MS;
    const v2 = f.version();
    expect(v2).not.toBe(v1);
    expect(f.version()).toBe(v2);
  });
});
