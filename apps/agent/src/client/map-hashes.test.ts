import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KiB, morselCount } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { DatasetReader } from './dataset-reader.js';
import { fetchMap } from './fetch-map.js';
import { readInOrder } from './in-order-read.js';
import { MapHashes } from './map-hashes.js';

// A real manager and two real donors. The dataset is small, so the hash pages are made tiny
// (8 morsels) to read it through many ranged map fetches, as a 1 TiB read would.
const MORSEL = 64 * KiB;
const PAGE = 8;
let c: DataCluster;
let src: TestServer;

beforeAll(async () => {
  c = await startDataCluster(2, '16MiB');
  src = await startTestServer({ size: 45 * MORSEL + 99, seed: 5 });
}, 180_000);
afterAll(async () => {
  await src?.close();
  await c?.close();
});

/** SHA-256 (hex) of everything `reader` reads, in order; the reader is closed after. */
async function sha256Read(reader: DatasetReader): Promise<string> {
  const whole = createHash('sha256');
  try {
    for await (const m of readInOrder(reader)) {
      whole.update(m.data);
      m.release();
    }
  } finally {
    await reader.close();
  }
  return whole.digest('hex');
}
const wholeSha256 = (): string => createHash('sha256').update(src.content).digest('hex');
/** The first morsel of every page of a `count`-morsel dataset. */
const everyPage = (count: number): number[] =>
  Array.from({ length: Math.ceil(count / PAGE) }, (_, p) => p * PAGE);

describe('reading through ranged maps', () => {
  it('fetches hashes page by page ahead of the reader and verifies every morsel', async () => {
    const d = await c.importAndWait({ uri: src.url, name: 'ranges/read.bin', morselSize: MORSEL });
    const count = morselCount(d.sizeBytes, MORSEL);
    const map = await fetchMap(c.tm.admin, d.id);
    expect(map.hashesFirst).toBe(0);
    const asked: number[] = [];
    // The map as a large dataset's would come: the first few hashes only.
    const hashes = new MapHashes(
      { ...map, hashes: map.hashes.slice(0, 3 * 64) },
      (first, n) => {
        asked.push(first);
        return c.tm.admin.getBytes(`/datasets/${d.id}/map?first=${first}&count=${n}`);
      },
      PAGE,
    );
    expect(await sha256Read(new DatasetReader(map, { mapHashes: hashes }))).toBe(wholeSha256());
    // Every page fetched exactly once (page 0 too: the seed held only 3 of its 8 hashes).
    expect([...asked].sort((a, b) => a - b)).toEqual(everyPage(count));
  });

  it('answers each morsel’s hash from any page, in any order, and refetches a failed page', async () => {
    const d = await c.importAndWait({
      uri: src.url,
      name: 'ranges/random.bin',
      morselSize: MORSEL,
    });
    const whole = await c.tm.admin.request<{ hashes: string }>('GET', `/datasets/${d.id}/map`);
    const map = await fetchMap(c.tm.admin, d.id);
    let failNext = true;
    const hashes = new MapHashes(
      { ...map, hashes: '' },
      async (first, n) => {
        if (failNext) {
          failNext = false;
          throw new Error('manager away');
        }
        return c.tm.admin.getBytes(`/datasets/${d.id}/map?first=${first}&count=${n}`);
      },
      PAGE,
    );
    await expect(hashes.expected(17)).rejects.toThrow(/manager away/);
    for (const m of [17, 44, 0, 9, 45, 31]) {
      expect(await hashes.expected(m), `morsel ${m}`).toBe(whole.hashes.slice(m * 64, m * 64 + 64));
    }
    expect(await hashes.expected(46)).toBe(''); // past the end
  });

  it('reads an encrypted dataset whose tags, too, come page by page', async () => {
    const d = await c.importAndWait({
      uri: src.url,
      name: 'ranges/sealed.bin',
      morselSize: MORSEL,
    });
    const count = morselCount(d.sizeBytes, MORSEL);
    const map = await fetchMap(c.tm.admin, d.id);
    expect(map.dataKey, 'imports are encrypted by default').toBeDefined();
    const tagPages: number[] = [];
    // As a large dataset's map would come: 3 hashes and 3 tags, the rest from binary pages.
    const pages = new MapHashes(
      { ...map, hashes: map.hashes.slice(0, 3 * 64), tags: map.tags!.slice(0, 3 * 32) },
      (first, n) => c.tm.admin.getBytes(`/datasets/${d.id}/map?first=${first}&count=${n}`),
      PAGE,
      (first, n) => {
        tagPages.push(first);
        return c.tm.admin.getBytes(`/datasets/${d.id}/map?first=${first}&count=${n}&of=tags`);
      },
    );
    expect(await sha256Read(new DatasetReader(map, { mapHashes: pages }))).toBe(wholeSha256());
    expect([...tagPages].sort((a, b) => a - b)).toEqual(everyPage(count));
    // A tag nobody knows is a failed check, never a pass.
    await expect(pages.tag(count + 1)).rejects.toThrow(/no AES-GCM tag/);
  });
});
