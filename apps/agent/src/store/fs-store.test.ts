import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  appendFile,
  mkdtemp,
  open,
  readdir,
  readFile,
  rm,
  stat,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MIN_MORSEL_SIZE } from '@freeloader/protocol';
import { runStoreConformance } from './conformance.js';
import { flipByte } from '../test/damage.js';
import { FsStore } from './fs-store.js';
import { encodeRecord, RECORD_SIZE } from './index-log.js';

const MS = MIN_MORSEL_SIZE;
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

runStoreConformance(
  'FsStore',
  async (opts) => {
    const dir = await mkdtemp(join(tmpdir(), 'fl-store-'));
    let store = await FsStore.open(dir, opts);
    return {
      store,
      reopen: async () => {
        await store.close();
        store = await FsStore.open(dir, opts);
        return store;
      },
      dispose: async () => {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
      // The only morsel sits in slot 0: its first byte is the data file's first byte.
      corruptOnlyMorsel: async (id) => flipByte(join(dir, 'datasets', `${id}.data`), 0),
    };
  },
  { persistent: true },
);

describe('FsStore on disk', () => {
  const dirs: string[] = [];
  const stores: FsStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  async function fresh(): Promise<{
    dir: string;
    store: FsStore;
    id: string;
    files: (ext: string) => string;
  }> {
    const dir = await mkdtemp(join(tmpdir(), 'fl-store-'));
    dirs.push(dir);
    const store = await FsStore.open(dir);
    stores.push(store);
    const id = randomUUID();
    return { dir, store, id, files: (ext) => join(dir, 'datasets', `${id}.${ext}`) };
  }
  async function reopen(
    dir: string,
    old: FsStore,
    opts: { maxOpenFiles?: number } = {},
  ): Promise<FsStore> {
    await old.close();
    const store = await FsStore.open(dir, opts);
    stores.push(store);
    return store;
  }

  it('keeps one data file, one index log and one meta file per dataset, and removes them on free', async () => {
    const { dir, store, id } = await fresh();
    await store.create(id, { morselSize: MS });
    await store.put(id, 0, randomBytes(10));
    expect((await readdir(join(dir, 'datasets'))).sort()).toEqual(
      [`${id}.data`, `${id}.idx`, `${id}.meta.json`].sort(),
    );
    await store.free(id);
    expect(await readdir(join(dir, 'datasets'))).toEqual([]);
  });

  it('lays morsels out in planned index order, unplanned ones after', async () => {
    const { store, id, files } = await fresh();
    await store.create(id, { morselSize: MS, planned: [9, 3, 5] });
    const data = new Map([9, 5, 3, 1].map((i) => [i, randomBytes(MS)]));
    for (const [i, d] of data) await store.put(id, i, d);
    const file = await readFile(files('data'));
    [3, 5, 9, 1].forEach((index, slot) => {
      expect(file.subarray(slot * MS, (slot + 1) * MS)).toEqual(data.get(index));
    });
  });

  it('reuses freed slots instead of growing the data file', async () => {
    const { store, id, files } = await fresh();
    await store.create(id, { morselSize: MS });
    await store.put(id, 0, randomBytes(MS));
    await store.put(id, 1, randomBytes(MS));
    await store.free(id, 0);
    await store.put(id, 2, randomBytes(MS));
    expect((await stat(files('data'))).size).toBe(2 * MS);
  });

  it.each([
    ['the last record cut off (crash before commit)', (size: number) => size - RECORD_SIZE],
    ['the last record torn mid-write', (size: number) => size - 20],
  ])('after %s, the morsel is invisible and its space is not leaked', async (_label, cut) => {
    const { dir, store, id, files } = await fresh();
    await store.create(id, { morselSize: MS });
    for (const i of [0, 1, 2]) await store.put(id, i, randomBytes(MS));
    await truncate(files('idx'), cut((await stat(files('idx'))).size));
    const again = await reopen(dir, store);
    await expect(again.get(id, 2)).rejects.toMatchObject({ code: 'MORSEL_NOT_FOUND' });
    expect(again.usage().usedBytes).toBe(2 * MS);
    expect((await stat(files('data'))).size).toBe(2 * MS);
    const next = randomBytes(MS);
    await again.put(id, 7, next);
    expect((await stat(files('data'))).size).toBe(3 * MS);
    const third = await reopen(dir, again);
    expect((await third.stat(id)).indices).toEqual([0, 1, 7]);
    expect((await third.get(id, 7)).sha256).toBe(sha(next));
  });

  it.each([
    ['deleted', async (path: string) => rm(path)],
    ['truncated inside morsel 1', async (path: string) => truncate(path, MS + 10)],
  ])(
    'a data file %s: its unbacked morsels are dropped and reported once, never served empty',
    async (_label, damage) => {
      const { dir, store, id, files } = await fresh();
      await store.create(id, { morselSize: MS, planned: [0, 1, 2] });
      const data = [0, 1, 2].map(() => randomBytes(MS));
      for (const [i, d] of data.entries()) await store.put(id, i, d);
      await damage(files('data'));
      const again = await reopen(dir, store);
      const whole = (await stat(files('data'))).size >= MS ? [0] : [];
      const lost = [0, 1, 2].filter((i) => !whole.includes(i));
      expect(again.drainLost()).toEqual(lost.map((index) => ({ datasetId: id, index })));
      expect(again.drainLost()).toEqual([]);
      expect(again.warnings.join()).toMatch(/dropped/);
      expect((await again.stat(id)).indices).toEqual(whole);
      expect(again.usage().usedBytes).toBe(whole.length * MS);
      for (const i of lost) {
        await expect(again.get(id, i)).rejects.toMatchObject({ code: 'MORSEL_NOT_FOUND' });
      }
      // Still dropped after another restart, and the slots take new puts.
      const third = await reopen(dir, again);
      expect(third.drainLost()).toEqual([]);
      expect((await third.stat(id)).indices).toEqual(whole);
      await third.put(id, 2, data[2]!);
      expect((await third.get(id, 2)).data).toEqual(data[2]);
      if (whole.length > 0) expect(await third.verify(id, 0)).toBe(true);
    },
  );

  it('ignores a torn trailing record and appends cleanly after it', async () => {
    const { dir, store, id, files } = await fresh();
    await store.create(id, { morselSize: MS });
    await store.put(id, 0, randomBytes(100));
    await appendFile(files('idx'), randomBytes(30));
    const again = await reopen(dir, store);
    expect(again.warnings.join()).toMatch(/torn or corrupt/);
    await again.put(id, 1, randomBytes(100));
    const third = await reopen(dir, again);
    expect((await third.stat(id)).indices).toEqual([0, 1]);
    expect(third.warnings).toEqual([]);
  });

  it('skips a corrupt record in the middle of the log but keeps the ones after it', async () => {
    const { dir, store, id, files } = await fresh();
    await store.create(id, { morselSize: MS });
    for (const i of [0, 1]) await store.put(id, i, randomBytes(100));
    const fh = await open(files('idx'), 'r+');
    await fh.write(Buffer.from([0xff]), 0, 1, 10); // inside record 0
    await fh.close();
    const again = await reopen(dir, store);
    expect((await again.stat(id)).indices).toEqual([1]);
    expect(again.usage().usedBytes).toBe(100);
  });

  it('compacts a log made mostly of dead records on open', async () => {
    const { dir, store, id, files } = await fresh();
    await store.create(id, { morselSize: MS });
    const data = randomBytes(MS);
    await store.put(id, 0, data);
    const rec = encodeRecord({ kind: 'put', index: 0, slot: 0, length: MS, sha256: sha(data) });
    await appendFile(files('idx'), Buffer.concat(Array.from({ length: 1100 }, () => rec)));
    const again = await reopen(dir, store);
    expect((await stat(files('idx'))).size).toBe(RECORD_SIZE);
    expect((await again.get(id, 0)).data).toEqual(data);
  });

  it('removes data files whose create or free never finished, and ignores stray files', async () => {
    const { dir, store } = await fresh();
    const orphan = join(dir, 'datasets', `${randomUUID()}.data`);
    await writeFile(orphan, 'x');
    await writeFile(join(dir, 'datasets', 'notes.meta.json'), '{}');
    const again = await reopen(dir, store);
    expect(await readdir(join(dir, 'datasets'))).toEqual(['notes.meta.json']);
    expect(again.warnings.join()).toMatch(/not a dataset id/);
  });

  it('serves many datasets through a tiny file handle cache', async () => {
    const { dir, store } = await fresh();
    const small = await reopen(dir, store, { maxOpenFiles: 2 });
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const data = ids.map(() => randomBytes(1000));
    for (const id of ids) await small.create(id, { morselSize: MS });
    await Promise.all(ids.map((id, k) => small.put(id, 0, data[k]!)));
    const got = await Promise.all(ids.flatMap((id) => [small.get(id, 0), small.get(id, 0)]));
    got.forEach((g, k) => expect(g.data).toEqual(data[Math.floor(k / 2)]));
  });
});
