import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../test/harness.js';
import { getHashes, putMorselHashes } from './placement.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const digest = (i: number): string => createHash('sha256').update(String(i)).digest('hex');

describe('morsel hashes', () => {
  it('keeps every digest when many donors report into the same new chunk at once', async () => {
    const ds = await h.app.namespaceRepo.createDataset({
      path: 'race/hashes.bin',
      sizeBytes: 64 << 20,
    });
    // 8 donors, interleaved morsels, all into chunk 0, reported concurrently.
    await Promise.all(
      Array.from({ length: 8 }, (_, donor) =>
        putMorselHashes(
          h.app.pg,
          ds.id,
          Array.from({ length: 8 }, (_, k) => ({
            index: k * 8 + donor,
            sha256: digest(k * 8 + donor),
          })),
        ),
      ),
    );
    const all = await getHashes(h.app.pg, ds.id);
    expect(all.length).toBe(64 * 32);
    for (let i = 0; i < 64; i++)
      expect(all.subarray(i * 32, i * 32 + 32).toString('hex')).toBe(digest(i));
  });

  it('spans chunk boundaries', async () => {
    const ds = await h.app.namespaceRepo.createDataset({ path: 'race/span.bin', sizeBytes: 1 });
    await putMorselHashes(
      h.app.pg,
      ds.id,
      [4095, 4096, 4097].map((index) => ({ index, sha256: digest(index) })),
    );
    const got = await getHashes(h.app.pg, ds.id, 4095, 3);
    expect(got.toString('hex')).toBe([4095, 4096, 4097].map(digest).join(''));
  });

  it('writes each 4096-morsel row once for a report of every 4th morsel, the last of a repeat kept', async () => {
    const ds = await h.app.namespaceRepo.createDataset({ path: 'race/scatter.bin', sizeBytes: 1 });
    // One donor of four: morsels 1, 5, 9, … over two rows, as an import's progress reports them.
    const mine = Array.from({ length: 2048 }, (_, k) => k * 4 + 1);
    const client = await h.app.pg.connect();
    let queries = 0;
    const counted = new Proxy(client, {
      get: (target, key) =>
        key === 'query'
          ? (...args: unknown[]) => {
              queries++;
              return (target.query as (...a: unknown[]) => unknown)(...args);
            }
          : Reflect.get(target, key),
    });
    try {
      await client.query('BEGIN');
      await putMorselHashes(counted, ds.id, [
        { index: 1, sha256: digest(-1) },
        ...mine.map((index) => ({ index, sha256: digest(index) })),
      ]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    // Rows exist, locked and read, then each written once: 2 + 2 rows (it was 3 per morsel).
    expect(queries).toBe(4);
    const all = await getHashes(h.app.pg, ds.id);
    for (const i of [0, 1, 2, 5, 4093, 4097, 8189]) {
      const got = all.subarray(i * 32, i * 32 + 32).toString('hex');
      expect(got, `morsel ${i}`).toBe(i % 4 === 1 ? digest(i) : '00'.repeat(32));
    }
  });
});
