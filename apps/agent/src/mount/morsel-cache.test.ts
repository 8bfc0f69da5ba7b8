import { describe, expect, it } from 'vitest';
import { MorselCache } from './morsel-cache.js';

const buf = (n: number, fill = 1): Buffer => Buffer.alloc(n, fill);

describe('MorselCache', () => {
  it.each([
    // capacity, loads (key:size), touched before the last load, expected keys kept
    [30, ['a:10', 'b:10', 'c:10'], [], ['a', 'b', 'c']],
    [30, ['a:10', 'b:10', 'c:10', 'd:10'], [], ['b', 'c', 'd']],
    [30, ['a:10', 'b:10', 'c:10', 'd:10'], ['a'], ['a', 'c', 'd']],
    [25, ['a:10', 'b:10', 'c:10'], [], ['b', 'c']],
    [5, ['a:10'], [], ['a']], // a morsel bigger than the cache is still returned and kept alone
  ])(
    'capacity %i, loads %j, touching %j keeps %j',
    async (capacity, loads: string[], touch: string[], kept: string[]) => {
      const cache = new MorselCache(capacity);
      for (const [i, spec] of loads.entries()) {
        const [key, size] = spec.split(':') as [string, string];
        if (i === loads.length - 1) for (const t of touch) cache.get(t);
        await cache.load(key, Number(size), async () => buf(Number(size)));
      }
      expect(['a', 'b', 'c', 'd'].filter((k) => cache.get(k))).toEqual(kept);
      expect(cache.usedBytes).toBeLessThanOrEqual(Math.max(capacity, 10));
    },
  );

  it('shares one load between concurrent asks', async () => {
    const cache = new MorselCache(100);
    let calls = 0;
    let release!: (b: Buffer) => void;
    const fetch = (): Promise<Buffer> => {
      calls++;
      return new Promise((r) => (release = r));
    };
    const p1 = cache.load('k', 10, fetch);
    const p2 = cache.load('k', 10, fetch);
    expect(cache.prefetch('k', 10, fetch)).toBe(true);
    expect(cache.usedBytes).toBe(10);
    release(buf(10, 7));
    expect(await p1).toBe(await p2);
    expect(calls).toBe(1);
    expect(cache.get('k')?.[0]).toBe(7);
  });

  it('forgets a failed load so the next ask tries again', async () => {
    const cache = new MorselCache(100);
    await expect(
      cache.load('k', 10, async () => {
        throw new Error('donor gone');
      }),
    ).rejects.toThrow('donor gone');
    expect(cache.has('k')).toBe(false);
    expect(cache.usedBytes).toBe(0);
    expect(await cache.load('k', 10, async () => buf(10))).toHaveLength(10);
  });

  it.each([
    [100, 0.5, 4, 5], // 5 × 10 bytes in flight fit half of 100
    [100, 0.2, 4, 2],
    [100, 1, 12, 10],
  ])(
    'capacity %i with prefetch share %f starts at most its share in flight (%i asked → %i)',
    (capacity, share, asked, startedCount) => {
      const cache = new MorselCache(capacity);
      const pending = (): Promise<Buffer> => new Promise(() => undefined);
      let started = 0;
      for (let i = 0; i < Math.max(asked, 12); i++) {
        if (cache.prefetch(`k${i}`, 10, pending, share)) started++;
      }
      expect(started).toBe(startedCount);
      expect(cache.usedBytes).toBe(startedCount * 10);
    },
  );
});
