import { describe, expect, it } from 'vitest';
import { MorselCache, type MorselBuffer, type MorselFetch } from './morsel-cache.js';

/** What a source does first: give a new buffer its memory. */
const attached = (into: MorselBuffer): MorselBuffer =>
  into.memory ? into : into.attach(new SharedArrayBuffer(into.size));

/** A fetch that fills the buffer with `fill` and reports `length` bytes. */
const filled =
  (length: number, fill = 1): MorselFetch =>
  async (into) => {
    attached(into).bytes.fill(fill, 0, length);
    return length;
  };

describe('MorselCache', () => {
  it.each([
    // capacity, loads (key:size), touched before the last load, expected keys kept
    [30, ['a:10', 'b:10', 'c:10'], [], ['a', 'b', 'c']],
    [30, ['a:10', 'b:10', 'c:10', 'd:10'], [], ['b', 'c', 'd']],
    [30, ['a:10', 'b:10', 'c:10', 'd:10'], ['a'], ['a', 'c', 'd']],
    [25, ['a:10', 'b:10', 'c:10'], [], ['b', 'c']],
    [5, ['a:10'], [], ['a']], // a morsel bigger than the cache is still returned and kept alone
    [30, ['a:10', 'b:20', 'c:10'], [], ['b', 'c']], // mixed sizes: the oldest goes
  ])(
    'capacity %i, loads %j, touching %j keeps %j',
    async (capacity, loads: string[], touch: string[], kept: string[]) => {
      const cache = new MorselCache(capacity);
      for (const [i, spec] of loads.entries()) {
        const [key, size] = spec.split(':') as [string, string];
        if (i === loads.length - 1) for (const t of touch) cache.get('f', t.charCodeAt(0));
        await cache.load('f', key.charCodeAt(0), Number(size), filled(Number(size)));
      }
      const keys = ['a', 'b', 'c', 'd'];
      expect(keys.filter((k) => cache.get('f', k.charCodeAt(0)))).toEqual(kept);
      expect(cache.size).toBe(kept.length);
      expect(cache.heldBytes).toBeLessThanOrEqual(Math.max(capacity, 10));
    },
  );

  it('keeps files apart and returns exactly the morsel’s bytes', async () => {
    const cache = new MorselCache(100);
    await cache.load('f', 0, 10, filled(7, 1));
    await cache.load('g', 0, 10, filled(10, 2));
    expect(cache.get('f', 0)).toEqual(Buffer.alloc(7, 1));
    expect(cache.get('g', 0)).toEqual(Buffer.alloc(10, 2));
    expect(cache.get('f', 1)).toBeUndefined();
  });

  it('shares one load between concurrent asks', async () => {
    const cache = new MorselCache(100);
    let calls = 0;
    let finish!: () => void;
    const fetch: MorselFetch = (into) => {
      calls++;
      return new Promise((r) => (finish = () => r(attached(into).bytes.fill(7).length)));
    };
    const p1 = cache.load('f', 1, 10, fetch);
    const p2 = cache.load('f', 1, 10, fetch);
    expect(cache.prefetch('f', 1, 10, fetch)).toBe(true);
    expect(cache.has('f', 1)).toBe(true);
    expect(cache.get('f', 1)).toBeUndefined(); // loading is not loaded
    expect(cache.usedBytes).toBe(10);
    finish();
    expect(await p1).toBe(await p2);
    expect(calls).toBe(1);
    expect(cache.get('f', 1)?.[0]).toBe(7);
  });

  it('forgets a failed load so the next ask tries again, reusing its buffer', async () => {
    const cache = new MorselCache(100);
    let first: MorselBuffer | undefined;
    await expect(
      cache.load('f', 1, 10, async (into) => {
        first = attached(into);
        throw new Error('donor gone');
      }),
    ).rejects.toThrow('donor gone');
    expect(cache.has('f', 1)).toBe(false);
    expect(cache.usedBytes).toBe(0);
    let second: MorselBuffer | undefined;
    const data = await cache.load('f', 1, 10, async (into) => {
      second = into;
      return 10;
    });
    expect(data).toHaveLength(10);
    expect(second).toBe(first);
  });

  it.each([
    [
      'fails without ever getting memory',
      async (): Promise<number> => Promise.reject(new Error('x')),
    ],
    [
      'reports more bytes than the buffer holds',
      async (into: MorselBuffer): Promise<number> => attached(into).size + 1,
    ],
  ])('forgets a load that %s, keeping no unusable buffer', async (_what, fetch) => {
    const cache = new MorselCache(100);
    await expect(cache.load('f', 0, 10, fetch)).rejects.toThrow();
    expect(cache.has('f', 0)).toBe(false);
    expect(cache.usedBytes).toBe(0);
    expect(await cache.load('f', 0, 10, filled(10))).toHaveLength(10);
  });

  it('reuses an evicted buffer of the same size instead of allocating one', async () => {
    const cache = new MorselCache(20);
    const seen = new Set<MorselBuffer>();
    for (let i = 0; i < 6; i++) {
      await cache.load('f', i, 10, async (into) => {
        seen.add(attached(into));
        return 10;
      });
    }
    expect(seen.size).toBe(2);
  });

  it('never reuses the buffer of a load still in flight, even past the bound', async () => {
    const cache = new MorselCache(20);
    const never = (): Promise<number> => new Promise(() => undefined);
    const buffers: MorselBuffer[] = [];
    for (let i = 0; i < 3; i++) {
      void cache.load('f', i, 10, (into) => {
        buffers.push(into);
        return never();
      });
    }
    expect(new Set(buffers).size).toBe(3); // the third demand load gets its own
    expect(cache.usedBytes).toBe(30);
  });

  it('drops spare buffers of another size (telling the source) to stay within the bound', async () => {
    const dropped: number[] = [];
    const cache = new MorselCache(30, (b) => dropped.push(b.size));
    await cache.load('f', 0, 10, filled(10));
    await cache.load('f', 1, 10, filled(10));
    await cache.load('g', 0, 30, filled(30)); // evicts both 10s, drops their buffers
    expect(dropped).toEqual([10, 10]);
    expect(cache.heldBytes).toBe(30);
    cache.clear();
    expect(dropped).toEqual([10, 10, 30]);
    expect(cache.heldBytes).toBe(0);
  });

  it.each([
    [100, 0.5, 4, 5], // 5 × 10 bytes in flight fit half of 100
    [100, 0.2, 4, 2],
    [100, 1, 12, 10],
  ])(
    'capacity %i with prefetch share %f starts at most its share in flight (%i asked → %i)',
    (capacity, share, asked, startedCount) => {
      const cache = new MorselCache(capacity);
      const pending = (): Promise<number> => new Promise(() => undefined);
      let started = 0;
      for (let i = 0; i < Math.max(asked, 12); i++) {
        if (cache.prefetch('f', i, 10, pending, share)) started++;
      }
      expect(started).toBe(startedCount);
      expect(cache.usedBytes).toBe(startedCount * 10);
    },
  );
});
