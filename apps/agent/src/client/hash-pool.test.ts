import { describe, expect, it } from 'vitest';
import { HashPool, sha256 } from './hash-pool.js';
import { MorselSlab } from './morsel-slab.js';

describe('HashPool', () => {
  it.each([0, 1, 2])('with %i worker(s) hashes slab slots like inline SHA-256', async (threads) => {
    const slab = new MorselSlab(4, 4096);
    const pool = new HashPool(threads);
    const slots = await Promise.all([0, 1, 2, 3].map(() => slab.acquire()));
    slots.forEach((s, i) => s.buffer.fill(i + 1));
    const got = await Promise.all(slots.map((s) => pool.hashSlot(slab, s.offset, 1000 + s.id)));
    expect(got).toEqual(slots.map((s) => sha256(Buffer.from(s.buffer.subarray(0, 1000 + s.id)))));
    await pool.close();
  });

  it('falls back inline when its workers are gone', async () => {
    const slab = new MorselSlab(1, 64);
    const pool = new HashPool(1);
    const slot = await slab.acquire();
    await (
      pool as unknown as { workers: { terminate(): Promise<number> }[] }
    ).workers[0]!.terminate();
    await new Promise((r) => setTimeout(r, 50));
    expect(await pool.hashSlot(slab, slot.offset, 64)).toBe(sha256(Buffer.alloc(64)));
    await pool.close();
  });

  it('forgets shared memory, and shares it again if asked to hash it later', async () => {
    const pool = new HashPool(1);
    const one = { memory: new SharedArrayBuffer(64) };
    Buffer.from(one.memory).fill(9);
    const want = sha256(Buffer.alloc(64, 9));
    expect(await pool.hashSlot(one, 0, 64)).toBe(want);
    pool.forget(one);
    pool.forget(one); // twice is harmless
    const ids = (pool as unknown as { slabIds: Map<unknown, number> }).slabIds;
    expect(ids.has(one)).toBe(false);
    expect(await pool.hashSlot(one, 0, 64)).toBe(want);
    await pool.close();
  });
});
