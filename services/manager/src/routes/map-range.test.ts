import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MAP_HASH_RANGE, type DatasetMap } from '@freeloader/protocol';
import { HASHES_PER_CHUNK, putHashes, setPlacement } from '../repositories/placement.js';
import { startHarness, type Harness } from '../test/harness.js';

// Real PostgreSQL: a dataset whose hashes span three `morsel_hashes` chunks, read by range.
const MORSELS = 2 * HASHES_PER_CHUNK + 123;
let h: Harness;
let user: string;
let id: string;
const hashes = Buffer.concat(
  Array.from({ length: MORSELS }, (_, i) => createHash('sha256').update(String(i)).digest()),
);

beforeAll(async () => {
  h = await startHarness();
  // The reader owns the dataset: maps go only to users who may read it.
  const reader = await h.login('scientist');
  user = reader.authorization;
  const donor = await h.enroll();
  const ds = await h.app.namespaceRepo.createDataset({
    path: 'ranges/x',
    sizeBytes: MORSELS * 65536,
    morselSize: 65536,
    state: 'ready',
    ownerId: reader.userId,
  });
  id = ds.id;
  await setPlacement(h.app.pg, id, [
    { copy: 0, first: 0, count: MORSELS, unit: 1, phase: 0, donors: [donor.agentId] },
  ]);
  await putHashes(h.app.pg, id, 0, hashes);
});
afterAll(async () => {
  await h?.close();
});

const get = (url: string, accept = 'application/json') =>
  h.call({ method: 'GET', url, headers: { authorization: user, accept } });
const slice = (first: number, count: number) =>
  hashes.subarray(first * 32, Math.min(MORSELS, first + count) * 32);

describe('GET /datasets/:id/map by range', () => {
  it('answers a JSON map whose hashes cover only the range asked for', async () => {
    const res = await get(`/api/v1/datasets/${id}/map?first=4000&count=200`);
    expect(res.statusCode, res.body).toBe(200);
    const map = res.json<DatasetMap>();
    expect(map.hashesFirst).toBe(4000);
    expect(map.hashes).toBe(slice(4000, 200).toString('hex'));
    expect(map.extents).toHaveLength(1);
    expect(map.capability).toMatch(/\./);
  });

  it('answers binary hashes, 32 bytes a morsel, across chunk boundaries and at the end', async () => {
    for (const [first, count] of [
      [0, 1],
      [HASHES_PER_CHUNK - 3, 7],
      [HASHES_PER_CHUNK - 1, HASHES_PER_CHUNK + 2],
      [MORSELS - 5, 100],
      [MORSELS + 10, 5],
    ] as const) {
      const res = await get(
        `/api/v1/datasets/${id}/map?first=${first}&count=${count}`,
        'application/octet-stream',
      );
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/application\/octet-stream/);
      expect(res.rawPayload.equals(slice(first, count)), `${first}+${count}`).toBe(true);
    }
  });

  it('keeps the whole JSON map without a range, and refuses ranges beyond the limit', async () => {
    const whole = (await get(`/api/v1/datasets/${id}/map`)).json<DatasetMap>();
    expect(whole.hashes).toBe(hashes.toString('hex'));
    expect(whole.hashesFirst).toBeUndefined();
    const tooMany = await get(`/api/v1/datasets/${id}/map?count=${MAX_MAP_HASH_RANGE + 1}`);
    expect(tooMany.statusCode).toBe(400);
  });
});
