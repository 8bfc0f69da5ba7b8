import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_MORSELS_PER_DATASET, MIN_MORSEL_SIZE } from '@freeloader/protocol';
import type { MorselStore } from './store.js';

/** What a factory hands the suite. */
export interface StoreUnderTest {
  store: MorselStore;
  /** Persistent stores only: close the current store and open the same state again. */
  reopen?: () => Promise<MorselStore>;
  /** Close and remove whatever the store left behind. */
  dispose: () => Promise<void>;
  /**
   * Flip one byte of the stored bytes of the dataset's only morsel behind the store's back (a
   * bit rot the scrub must find).
   */
  corruptOnlyMorsel: (datasetId: string) => Promise<void>;
}

export type StoreFactory = (opts: { quotaBytes?: number }) => Promise<StoreUnderTest>;

/**
 * {@link StoreUnderTest.corruptOnlyMorsel} for a memory store, whose get() hands out the held
 * buffer itself: flipping it is rot behind the store's back.
 */
export function corruptHeldBuffer(store: Pick<MorselStore, 'get'>) {
  return async (datasetId: string): Promise<void> => {
    const { data } = await store.get(datasetId, 0);
    data[0] = data[0]! ^ 0xff;
  };
}

/** Small morsels keep the suite fast; the logic does not depend on the size. */
const MS = MIN_MORSEL_SIZE;

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const bytes = (n: number = MS): Buffer => randomBytes(n);

/**
 * The one conformance suite every {@link MorselStore} implementation runs.
 *
 * Persistent stores pass `{ persistent: true }` and a factory whose result has `reopen`.
 *
 * @example
 *   runStoreConformance('MemoryStore', async (o) => {
 *     const store = new MemoryStore(o);
 *     return { store, dispose: () => store.close() };
 *   });
 */
export function runStoreConformance(
  name: string,
  factory: StoreFactory,
  opts: { persistent?: boolean } = {},
): void {
  describe(`MorselStore conformance: ${name}`, () => {
    let sut: StoreUnderTest | undefined;
    afterEach(async () => {
      await sut?.dispose();
      sut = undefined;
    });
    async function open(quotaBytes?: number): Promise<MorselStore> {
      sut = await factory(quotaBytes === undefined ? {} : { quotaBytes });
      return sut.store;
    }
    async function withDataset(quotaBytes?: number): Promise<[MorselStore, string]> {
      const store = await open(quotaBytes);
      const id = randomUUID();
      await store.create(id, { morselSize: MS });
      return [store, id];
    }

    it.each([
      ['full', MS],
      ['short last', 100],
      ['one byte', 1],
    ])('round-trips a %s morsel with its hash', async (_label, len) => {
      const [store, id] = await withDataset();
      const data = bytes(len);
      expect(await store.put(id, 7, data)).toEqual({ sha256: sha(data) });
      const got = await store.get(id, 7);
      expect(got.sha256).toBe(sha(data));
      expect(Buffer.compare(got.data, data)).toBe(0);
      expect((await store.stat(id)).bytes).toBe(len);
    });

    it('reads into a caller buffer when given one, and refuses one too small', async () => {
      const [store, id] = await withDataset();
      const data = bytes(300);
      await store.put(id, 3, data);
      const into = Buffer.alloc(MS, 0xee);
      const got = await store.get(id, 3, into);
      expect(got.data.buffer).toBe(into.buffer);
      expect(Buffer.compare(got.data, data)).toBe(0);
      expect(Buffer.compare(into.subarray(0, 300), data)).toBe(0);
    });

    it('lends a morsel in place (locate) whose bytes stay put until released', async () => {
      const [store, id] = await withDataset();
      if (!store.locate) return; // a store that does not keep morsels in files
      const data = bytes(300);
      await store.put(id, 5, data);
      const span = await store.locate(id, 5);
      expect(span).toMatchObject({ length: 300, sha256: sha(data) });
      // Freed and overwritten while lent: the lent bytes are not touched.
      await store.free(id, 5);
      const other = bytes(MS);
      await store.put(id, 5, other);
      await store.put(id, 6, other);
      const lent = Buffer.alloc(300);
      expect(readSync(span.fd, lent, 0, 300, span.position)).toBe(300);
      expect(Buffer.compare(lent, data)).toBe(0);
      span.release();
      span.release(); // a second release is harmless
      const again = await store.locate(id, 5);
      const now = Buffer.alloc(MS);
      readSync(again.fd, now, 0, MS, again.position);
      again.release();
      expect(Buffer.compare(now, other)).toBe(0);
      await expect(store.locate(id, 9)).rejects.toMatchObject({ code: 'MORSEL_NOT_FOUND' });
    });

    it('accepts a correct expected hash in either case', async () => {
      const [store, id] = await withDataset();
      const data = bytes();
      await store.put(id, 0, data, sha(data).toUpperCase());
      expect((await store.get(id, 0)).sha256).toBe(sha(data));
    });

    it('create is idempotent for the same morsel size and refuses another', async () => {
      const store = await open();
      const id = randomUUID();
      await store.create(id, { morselSize: MS, planned: [0, 1] });
      await store.put(id, 0, bytes());
      await store.create(id, { morselSize: MS, planned: [0, 1, 2] });
      expect((await store.stat(id)).indices).toEqual([0]);
      await expect(store.create(id, { morselSize: 2 * MS })).rejects.toMatchObject({
        code: 'CONFLICT',
      });
    });

    it('rejects a hash mismatch and keeps it invisible (and keeps the old morsel)', async () => {
      const [store, id] = await withDataset();
      const good = bytes();
      await expect(store.put(id, 1, bytes(), sha(good))).rejects.toMatchObject({
        code: 'HASH_MISMATCH',
      });
      await expect(store.get(id, 1)).rejects.toMatchObject({ code: 'MORSEL_NOT_FOUND' });
      expect(store.usage().usedBytes).toBe(0);
      await store.put(id, 1, good);
      await expect(store.put(id, 1, bytes(), sha(bytes()))).rejects.toMatchObject({
        code: 'HASH_MISMATCH',
      });
      // Even when the claimed hash is the one already stored, the bytes must match it.
      await expect(store.put(id, 1, bytes(), sha(good))).rejects.toMatchObject({
        code: 'HASH_MISMATCH',
      });
      await store.put(id, 1, good, sha(good));
      expect((await store.get(id, 1)).data).toEqual(good);
      expect(store.usage().usedBytes).toBe(MS);
    });

    const missing = randomUUID();
    it.each([
      ['get of an unknown dataset', (s: MorselStore) => s.get(missing, 0), 'DATASET_NOT_FOUND'],
      [
        'put to an unknown dataset',
        (s: MorselStore) => s.put(missing, 0, bytes(10)),
        'DATASET_NOT_FOUND',
      ],
      ['stat of an unknown dataset', (s: MorselStore) => s.stat(missing), 'DATASET_NOT_FOUND'],
      ['free of an unknown dataset', (s: MorselStore) => s.free(missing), 'DATASET_NOT_FOUND'],
      [
        'create with a path id',
        (s: MorselStore) => s.create('../../etc/passwd', { morselSize: MS }),
        'VALIDATION_FAILED',
      ],
      [
        'get with an uppercase id',
        (s: MorselStore) => s.get(missing.toUpperCase(), 0),
        'VALIDATION_FAILED',
      ],
      [
        'create with a tiny morsel size',
        (s: MorselStore) => s.create(missing, { morselSize: 1 }),
        'VALIDATION_FAILED',
      ],
      [
        'create with a bad planned index',
        (s: MorselStore) => s.create(missing, { morselSize: MS, planned: [-1] }),
        'VALIDATION_FAILED',
      ],
    ])('%s fails', async (_label, op, code) => {
      const store = await open();
      await expect(op(store)).rejects.toMatchObject({ code });
    });

    it.each([
      ['a missing morsel', (s: MorselStore, id: string) => s.get(id, 3), 'MORSEL_NOT_FOUND'],
      [
        'a negative index',
        (s: MorselStore, id: string) => s.put(id, -1, bytes(10)),
        'VALIDATION_FAILED',
      ],
      ['a fractional index', (s: MorselStore, id: string) => s.get(id, 1.5), 'VALIDATION_FAILED'],
      [
        'an index past the limit',
        (s: MorselStore, id: string) => s.put(id, MAX_MORSELS_PER_DATASET, bytes(10)),
        'VALIDATION_FAILED',
      ],
      [
        'an empty morsel',
        (s: MorselStore, id: string) => s.put(id, 0, Buffer.alloc(0)),
        'VALIDATION_FAILED',
      ],
      [
        'a morsel longer than morselSize',
        (s: MorselStore, id: string) => s.put(id, 0, bytes(MS + 1)),
        'VALIDATION_FAILED',
      ],
      [
        'a malformed hash',
        (s: MorselStore, id: string) => s.put(id, 0, bytes(10), 'abc'),
        'VALIDATION_FAILED',
      ],
    ])('%s fails', async (_label, op, code) => {
      const [store, id] = await withDataset();
      await expect(op(store, id)).rejects.toMatchObject({ code });
      expect(store.usage().usedBytes).toBe(0);
    });

    it('frees a morsel (idempotently) and a dataset, releasing quota', async () => {
      const [store, id] = await withDataset();
      await store.put(id, 0, bytes());
      await store.put(id, 1, bytes(10));
      expect(store.usage().usedBytes).toBe(MS + 10);
      await store.free(id, 0);
      await store.free(id, 0);
      await expect(store.get(id, 0)).rejects.toMatchObject({ code: 'MORSEL_NOT_FOUND' });
      expect(store.usage().usedBytes).toBe(10);
      await store.free(id);
      expect(store.usage().usedBytes).toBe(0);
      expect(await store.list()).toEqual([]);
      await expect(store.get(id, 1)).rejects.toMatchObject({ code: 'DATASET_NOT_FOUND' });
      await store.create(id, { morselSize: MS });
      await expect(store.get(id, 1)).rejects.toMatchObject({ code: 'MORSEL_NOT_FOUND' });
    });

    it('enforces the quota exactly', async () => {
      const [store, id] = await withDataset(2 * MS + 10);
      await store.put(id, 0, bytes());
      await store.put(id, 1, bytes());
      await expect(store.put(id, 2, bytes(11))).rejects.toMatchObject({ code: 'NO_SPACE' });
      await store.put(id, 2, bytes(10));
      expect(store.usage()).toEqual({
        quotaBytes: 2 * MS + 10,
        usedBytes: 2 * MS + 10,
        freeBytes: 0,
      });
      await store.put(id, 0, bytes()); // replacing with the same length needs no new space
      await store.free(id, 1);
      await store.put(id, 3, bytes());
    });

    it('lets the quota drop below usage: data stays readable, puts fail', async () => {
      const [store, id] = await withDataset();
      await store.put(id, 0, bytes());
      store.setQuota(10);
      expect(store.usage()).toEqual({ quotaBytes: 10, usedBytes: MS, freeBytes: 0 });
      await expect(store.put(id, 1, bytes(1))).rejects.toMatchObject({ code: 'NO_SPACE' });
      expect((await store.get(id, 0)).data.length).toBe(MS);
    });

    it('lists datasets and stats sorted indices', async () => {
      const [store, a] = await withDataset();
      const b = randomUUID();
      await store.create(b, { morselSize: 2 * MS });
      for (const i of [5, 0, 3]) await store.put(a, i, bytes(i + 1));
      await store.put(b, 0, bytes());
      const list = await store.list();
      expect(list.sort((x, y) => x.morselSize - y.morselSize)).toEqual([
        { datasetId: a, morselSize: MS, morsels: 3, bytes: 1 + 4 + 6 },
        { datasetId: b, morselSize: 2 * MS, morsels: 1, bytes: MS },
      ]);
      expect(await store.stat(a)).toEqual({ ...list[0], indices: [0, 3, 5] });
    });

    it('verify re-hashes a held morsel: true when intact, MORSEL_NOT_FOUND when not held', async () => {
      const [store, id] = await withDataset();
      await store.put(id, 3, bytes(77));
      expect(await store.verify(id, 3)).toBe(true);
      await expect(store.verify(id, 4)).rejects.toMatchObject({ code: 'MORSEL_NOT_FOUND' });
      await expect(store.verify(randomUUID(), 0)).rejects.toMatchObject({
        code: 'DATASET_NOT_FOUND',
      });
      expect(store.drainLost()).toEqual([]);
    });

    it('verify finds a flipped byte; freeing the morsel drops it from stat', async () => {
      const [store, id] = await withDataset();
      await store.put(id, 0, bytes());
      await sut!.corruptOnlyMorsel(id);
      expect(await store.verify(id, 0)).toBe(false);
      await store.free(id, 0);
      expect((await store.stat(id)).indices).toEqual([]);
    });

    it('reports free space as it is: no diskFull flag on a healthy store', async () => {
      const [store, id] = await withDataset(4 * MS);
      await store.put(id, 0, bytes());
      expect(store.usage()).toEqual({ quotaBytes: 4 * MS, usedBytes: MS, freeBytes: 3 * MS });
    });

    it('replaces a morsel put again with other bytes', async () => {
      const [store, id] = await withDataset();
      await store.put(id, 4, bytes());
      const second = bytes(20);
      await store.put(id, 4, second);
      expect((await store.get(id, 4)).data).toEqual(second);
      expect(store.usage().usedBytes).toBe(20);
    });

    it('handles concurrent puts and gets to one dataset', async () => {
      const [store, id] = await withDataset();
      const data = Array.from({ length: 16 }, (_, i) => bytes(MS - i));
      await Promise.all(data.map((d, i) => store.put(id, i, d)));
      const got = await Promise.all(data.map((_, i) => store.get(id, i)));
      got.forEach((g, i) => expect(g.sha256).toBe(sha(data[i]!)));
      expect(store.usage().usedBytes).toBe(data.reduce((n, d) => n + d.length, 0));
    });

    it('never lets concurrent puts overshoot the quota together', async () => {
      const [store, id] = await withDataset(3 * MS);
      const results = await Promise.allSettled(
        [0, 1, 2, 3, 4].map((i) => store.put(id, i, bytes())),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
      expect(store.usage().usedBytes).toBe(3 * MS);
    });

    if (opts.persistent)
      it('persists across reopen', async () => {
        const [store, id] = await withDataset(10 * MS);
        if (!sut?.reopen) throw new Error('a persistent store factory must give reopen()');
        const kept = [bytes(), bytes(33), bytes()];
        for (const [i, d] of kept.entries()) await store.put(id, i, d);
        await store.free(id, 1);
        const before = { list: await store.list(), usage: store.usage() };
        const again = await sut.reopen();
        expect(await again.list()).toEqual(before.list);
        expect(again.usage().usedBytes).toBe(before.usage.usedBytes);
        expect((await again.stat(id)).indices).toEqual([0, 2]);
        expect((await again.get(id, 2)).data).toEqual(kept[2]);
        await again.put(id, 1, kept[1]!);
        expect((await again.get(id, 1)).sha256).toBe(sha(kept[1]!));
      });
  });
}
