import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MAP_HASH_RANGE, type DatasetMap } from '@freeloader/protocol';
import {
  HASHES_PER_CHUNK,
  putHashes,
  putMorselHashes,
  setPlacement,
} from '../repositories/placement.js';
import { startHarness, type Harness } from '../test/harness.js';

// Real PostgreSQL: a dataset whose hashes span three `morsel_hashes` chunks, read by range.
const MORSELS = 2 * HASHES_PER_CHUNK + 123;
let h: Harness;
let user: string;
let id: string;
let sealedId: string;
let agentAuth: string;
let donorId: string;
const hashes = Buffer.concat(
  Array.from({ length: MORSELS }, (_, i) => createHash('sha256').update(String(i)).digest()),
);

beforeAll(async () => {
  h = await startHarness();
  // The reader owns the dataset: maps go only to users who may read it.
  const reader = await h.login('scientist');
  user = reader.authorization;
  const donor = await h.enroll();
  // A ready dataset of MORSELS morsels owned by the reader, all on the donor.
  const placed = async (path: string): Promise<string> => {
    const ds = await h.app.namespaceRepo.createDataset({
      path,
      sizeBytes: MORSELS * 65536,
      morselSize: 65536,
      state: 'ready',
      ownerId: reader.userId,
    });
    await setPlacement(h.app.pg, ds.id, [
      { copy: 0, first: 0, count: MORSELS, unit: 1, phase: 0, donors: [donor.agentId] },
    ]);
    return ds.id;
  };
  id = await placed('ranges/x');
  await putHashes(h.app.pg, id, 0, hashes);
  agentAuth = donor.auth;
  donorId = donor.agentId;

  // The same morsels encrypted: a data key, and a tag per morsel (16 bytes, spanning chunks).
  sealedId = await placed('ranges/sealed');
  await h.app.dataKeys.create(sealedId);
  await putMorselHashes(
    h.app.pg,
    sealedId,
    Array.from({ length: MORSELS }, (_, i) => ({
      index: i,
      sha256: hashes.subarray(i * 32, i * 32 + 32).toString('hex'),
      tag: tagOf(i).toString('hex'),
    })),
  );
});
afterAll(async () => {
  await h?.close();
});

const get = (url: string, accept = 'application/json') =>
  h.call({ method: 'GET', url, headers: { authorization: user, accept } });
const slice = (first: number, count: number) =>
  hashes.subarray(first * 32, Math.min(MORSELS, first + count) * 32);
/** A distinct 16-byte stand-in for morsel `i`'s AES-GCM tag. */
function tagOf(i: number): Buffer {
  return createHash('md5').update(`tag ${i}`).digest();
}
const tagSlice = (first: number, count: number) =>
  Buffer.concat(
    Array.from({ length: Math.max(0, Math.min(MORSELS, first + count) - first) }, (_, k) =>
      tagOf(first + k),
    ),
  );

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

  it("gives a ranged map only its range's tags, and the rest as binary pages of 16 bytes", async () => {
    const first = HASHES_PER_CHUNK - 10;
    const res = await get(`/api/v1/datasets/${sealedId}/map?first=${first}&count=300`);
    expect(res.statusCode, res.body).toBe(200);
    const map = res.json<DatasetMap>();
    expect(map.dataKey).toBeDefined();
    expect(map.hashesFirst).toBe(first);
    expect(map.tags).toBe(tagSlice(first, 300).toString('hex'));
    expect(map.hashes).toBe(slice(first, 300).toString('hex'));
    // The whole map still carries every tag (old clients).
    const whole = (await get(`/api/v1/datasets/${sealedId}/map`)).json<DatasetMap>();
    expect(whole.tags).toBe(tagSlice(0, MORSELS).toString('hex'));
    for (const [from, count] of [
      [0, 1],
      [HASHES_PER_CHUNK - 1, HASHES_PER_CHUNK + 2],
      [MORSELS - 5, 100],
    ] as const) {
      const page = await get(
        `/api/v1/datasets/${sealedId}/map?first=${from}&count=${count}&of=tags`,
        'application/octet-stream',
      );
      expect(page.statusCode).toBe(200);
      expect(page.rawPayload.equals(tagSlice(from, count)), `${from}+${count}`).toBe(true);
    }
  });

  it("gives agents no tags (the key and tags go with a user's read only)", async () => {
    const page = await h.call({
      method: 'GET',
      url: `/api/v1/datasets/${sealedId}/map?first=0&count=10&of=tags`,
      headers: { authorization: agentAuth, accept: 'application/octet-stream' },
    });
    expect(page.statusCode).toBe(200);
    expect(page.rawPayload.length).toBe(0);
    const hashesPage = await h.call({
      method: 'GET',
      url: `/api/v1/datasets/${sealedId}/map?first=0&count=10`,
      headers: { authorization: agentAuth, accept: 'application/octet-stream' },
    });
    expect(hashesPage.rawPayload.equals(slice(0, 10))).toBe(true);
  });

  it("gives a donor's rate only once readers observed it, never the join-time probe's", async () => {
    const beat = await h.call({
      method: 'POST',
      url: '/api/v1/agents/heartbeat',
      headers: { authorization: agentAuth },
      payload: {
        quotaBytes: 1e9,
        usedBytes: 0,
        freeBytes: 1e9,
        servingRate: 0,
        diagnostics: {
          diskReadRate: 400e6,
          downloadRate: 100e6,
          uploadRate: 110e6,
          measuredAt: new Date().toISOString(),
        },
      },
    });
    expect(beat.statusCode).toBe(200);
    const donorOf = async () =>
      (await get(`/api/v1/datasets/${id}/map`)).json<DatasetMap>().donors[0]!;
    expect(await donorOf()).not.toHaveProperty('rate');
    const sample = await h.call({
      method: 'POST',
      url: '/api/v1/rates',
      headers: { authorization: user },
      payload: {
        datasetId: id,
        samples: [{ agentId: donorId, bytes: 24e6, seconds: 2 }],
        failures: [],
      },
    });
    expect(sample.statusCode).toBe(200);
    expect((await donorOf()).rate).toBe(12e6);
  });
});
