import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sealMorsel } from '@freeloader/protocol';
import { waitFor } from '../test/cluster-harness.js';
import { HashPool, OPEN_CHUNK_BYTES, sha256 } from './hash-pool.js';
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

  it.each([
    [0, 4096],
    [1, 4096],
    // Several of the worker's deciphering steps, and a short last one.
    [1, 3 * OPEN_CHUNK_BYTES + 1000],
  ])(
    'with %i worker(s) opens sealed %i-byte slots in place, and refuses a bad tag',
    async (threads, size) => {
      const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
      const key = randomBytes(32);
      const slab = new MorselSlab(2, size);
      const pool = new HashPool(threads);
      const internals = pool as unknown as { ready: unknown[] };
      // A worker boots a V8 isolate first; until then the pool opens inline.
      if (threads > 0)
        await waitFor(
          'a ready worker',
          async () => internals.ready.length > 0 || undefined,
          60_000,
          20,
        );
      const [good, bad] = [await slab.acquire(), await slab.acquire()];
      const plain = randomBytes(size);
      plain.copy(good.buffer);
      plain.copy(bad.buffer);
      const tag = sealMorsel(key, id, 3, good.buffer);
      sealMorsel(key, id, 3, bad.buffer);
      expect(good.buffer.equals(plain)).toBe(false);
      // A flipped byte in the last step: every step before it has been deciphered when the tag fails.
      bad.buffer[size - 17] = bad.buffer[size - 17]! ^ 1;
      const seal = { key, datasetId: id, index: 3, tag };
      expect(await pool.openSlot(slab, good.offset, size, seal)).toBe(true);
      expect(good.buffer.equals(plain)).toBe(true);
      expect(await pool.openSlot(slab, bad.offset, size, seal)).toBe(false);
      // The wrong index (another nonce) fails too, however many steps matched nothing.
      plain.copy(good.buffer);
      sealMorsel(key, id, 3, good.buffer);
      expect(await pool.openSlot(slab, good.offset, size, { ...seal, index: 4 })).toBe(false);
      await pool.close();
    },
  );
});
