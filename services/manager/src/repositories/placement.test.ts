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
});
