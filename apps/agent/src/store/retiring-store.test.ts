import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MIN_MORSEL_SIZE } from '@freeloader/protocol';
import { corruptHeldBuffer, runStoreConformance } from './conformance.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { flipByte } from '../test/damage.js';
import { FsStore } from './fs-store.js';
import { MemoryStore } from './memory-store.js';
import { READER_MAP_LIFETIME_MS, RetiringStore } from './retiring-store.js';

// The decorator is a MorselStore like any other…
runStoreConformance('RetiringStore over MemoryStore', async (opts) => {
  const inner = new MemoryStore(opts);
  const store = new RetiringStore(inner);
  return { store, dispose: () => store.close(), corruptOnlyMorsel: corruptHeldBuffer(inner) };
});

// …and over a store that keeps morsels in files, it lends them in place as that store does.
runStoreConformance('RetiringStore over FsStore', async (opts) => {
  const dir = await mkdtemp(join(tmpdir(), 'fl-retiring-'));
  const inner = await FsStore.open(dir, opts);
  const store = new RetiringStore(inner);
  return {
    store,
    dispose: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
    corruptOnlyMorsel: async (id) => flipByte(join(dir, 'datasets', `${id}.data`), 0),
  };
});

const MS = MIN_MORSEL_SIZE;

/**
 * A store holding morsels 0..n-1 of one dataset (n × 64 KiB) under `quota`, a hand-moved clock
 * and a switch for "the disk runs short".
 */
async function holding(n: number, quota = 100 * MS) {
  let now = 0;
  const disk = { short: false };
  const store = new RetiringStore(new MemoryStore({ quotaBytes: quota }), {
    clock: () => now,
    diskShort: async () => disk.short,
  });
  const id = randomUUID();
  await store.create(id, { morselSize: MS });
  for (let i = 0; i < n; i++) await store.put(id, i, randomBytes(MS));
  return {
    store,
    id,
    disk,
    advance: (ms: number) => (now += ms),
    held: async () => (await store.stat(id).catch(() => ({ indices: [] as number[] }))).indices,
  };
}

const moved = (indices: number[]) => indices.map((index) => ({ index, bytes: MS }));

describe('RetiringStore', () => {
  it('keeps relocated morsels readable until old maps expire, without counting them', async () => {
    const s = await holding(4);
    s.store.retire(s.id, moved([0, 1]), READER_MAP_LIFETIME_MS);
    expect(s.store.usage()).toMatchObject({ usedBytes: 2 * MS, freeBytes: 98 * MS });
    expect(s.store.retiredBytes).toBe(2 * MS);

    // Well past the manager's old 5 s grace: a reader with the old map still gets its bytes.
    s.advance(60_000);
    await s.store.sweep();
    expect((await s.store.get(s.id, 0)).data.length).toBe(MS);
    expect(await s.held()).toEqual([0, 1, 2, 3]);

    // Once every capability for the old map has expired, they go.
    s.advance(READER_MAP_LIFETIME_MS);
    await s.store.sweep();
    expect(await s.held()).toEqual([2, 3]);
    expect(s.store.retiredBytes).toBe(0);
    expect(s.store.usage().usedBytes).toBe(2 * MS);
  });

  it('drops the dataset once its last morsel was retired and freed', async () => {
    const s = await holding(2);
    s.store.retire(s.id, moved([0, 1]), 1_000);
    s.advance(1_000);
    await s.store.sweep();
    expect(await s.store.list()).toEqual([]);
  });

  it.each([
    // [morsels held, quota (morsels), retired (deadline order: 0 soonest), put needs, freed]
    ['room left: nothing freed', 4, 8, [0, 1, 2], 1, []],
    ['one short: the soonest deadline goes', 4, 4, [0, 1, 2], 1, [0]],
    ['two short: the two soonest go', 4, 4, [0, 1, 2], 2, [0, 1]],
  ])('a put that needs the space frees retired morsels: %s', async (...row) => {
    const [, n, quota, retired, needs, freed] = row;
    const s = await holding(n, quota * MS);
    // Retired one after another: earlier indices have the sooner deadlines.
    for (const i of retired) {
      s.store.retire(s.id, moved([i]), 10_000);
      s.advance(1);
    }
    for (let k = 0; k < needs; k++) await s.store.put(s.id, 10 + k, randomBytes(MS));
    const held = await s.held();
    for (const i of freed) expect(held).not.toContain(i);
    for (const i of retired.filter((r) => !freed.includes(r))) expect(held).toContain(i);
  });

  it('a disk running short frees every retired morsel at the next sweep', async () => {
    const s = await holding(3);
    s.store.retire(s.id, moved([0, 1]), READER_MAP_LIFETIME_MS);
    s.disk.short = true;
    await s.store.sweep();
    expect(await s.held()).toEqual([2]);
    expect(s.store.retiredBytes).toBe(0);
  });

  it('a morsel placed here again is no longer retired', async () => {
    const s = await holding(2);
    s.store.retire(s.id, moved([0, 1]), 1_000);
    await s.store.put(s.id, 1, randomBytes(MS)); // relocated back by a later quota change
    s.advance(1_000);
    await s.store.sweep();
    expect(await s.held()).toEqual([1]);
    expect(s.store.usage().usedBytes).toBe(MS);
  });

  it('deleting the dataset forgets what was retired of it', async () => {
    const s = await holding(2);
    s.store.retire(s.id, moved([0]), 1_000);
    await s.store.free(s.id);
    expect(s.store.retiredBytes).toBe(0);
    s.advance(1_000);
    await expect(s.store.sweep()).resolves.toBeUndefined();
  });
});
