import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MiB,
  type AgentHealthResponse,
  type AgentView,
  type CacheCut,
  type CacheStatus,
  type DatasetMap,
  type DatasetView,
  type PatchSessionView,
} from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { DatasetReader } from '../client/dataset-reader.js';
import { attachSuffixPlan } from '../client/suffix-plan.js';
import { waitFor } from '../test/cluster-harness.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { markedContent, markersOnDonors } from '../test/plaintext-marker.js';

// Prefix extension (issue 7) on real agent processes: three storage donors of 16 MiB (48 MiB,
// 90 % high watermark: 43.2 MiB), real HTTP sources, datasets cut back to a 30 % prefix.
let c: DataCluster;
const servers: TestServer[] = [];

beforeAll(async () => {
  c = await startDataCluster(3, '16MiB');
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await c?.close();
});

const SIZE = 20 * MiB + 7;
const PREFIX = 6 * MiB;

const cache = () => c.tm.admin.request<CacheStatus>('GET', '/cache');
const cachedView = async (id: string) => (await cache()).datasets.find((d) => d.id === id)!;
/** Fetching the map is what makes a read: counted by the manager, no suffix plan yet. */
const rawMap = (id: string) => c.tm.admin.request<DatasetMap>('GET', `/datasets/${id}/map`);
/** Bytes the donors' stores hold right now, as their health endpoints report it. */
async function storedBytes(): Promise<number> {
  const used = await Promise.all(
    (await c.tm.agents()).map(async (a) => {
      const res = await fetch(`${a.url}/v1/health`);
      return ((await res.json()) as AgentHealthResponse).usedBytes;
    }),
  );
  return used.reduce((s, n) => s + n, 0);
}

async function jobsSettled(id: string): Promise<void> {
  await waitFor('the dataset jobs to settle', async () => {
    const t = await c.tm.admin.request<{ state: string; datasetId: string }[]>('GET', '/transfers');
    return t.some((j) => j.datasetId === id && (j.state === 'queued' || j.state === 'running'))
      ? undefined
      : true;
  });
}

/** A dataset imported whole, then cut back to its first 6 MiB (30 %). */
async function prefixDataset(seed: number, name: string) {
  const src = await startTestServer({ content: markedContent(SIZE, seed) });
  servers.push(src);
  // One copy: the tests follow the bytes of one extension (copies are placement's business).
  // Encrypted (the default): a stale map's suffix is patched below and checked by its tags.
  const d = await c.importAndWait({ uri: src.url, name, replicas: 1 });
  expect(d.state).toBe('ready');
  const cut = await c.tm.admin.request<CacheCut>('PUT', `/datasets/${d.id}/cached`, {
    cachedBytes: PREFIX,
  });
  expect(cut).toMatchObject({ kind: 'trim', toBytes: PREFIX });
  await jobsSettled(d.id);
  return { src, d };
}

/** Every morsel through a reader built on `map` (prefix from donors, suffix patched), in order. */
async function readAll(map: DatasetMap): Promise<Buffer> {
  const reader = new DatasetReader(map);
  try {
    const parts: Buffer[] = [];
    for (let m = 0; m * map.dataset.morselSize < map.dataset.sizeBytes; m++) {
      parts.push(Buffer.from(await reader.readMorsel(m)));
    }
    return Buffer.concat(parts);
  } finally {
    await reader.close();
  }
}

describe('prefix extension', { timeout: 180_000 }, () => {
  it('extends a 30 % prefix read three times; every read is byte-identical', async () => {
    const { src, d } = await prefixDataset(91, 'extend/popular.bin');
    const want = sha256Hex(src.content);
    for (const _ of [1, 2]) expect((await c.get(d.id)).sha256).toBe(want);
    expect(await cachedView(d.id)).toMatchObject({ cachedBytes: PREFIX, reads: 2 });
    expect((await cachedView(d.id)).extendingToBytes).toBeUndefined();
    const beforeExtension = src.seen.length;

    // The third read: its map places only the 6 MiB prefix; it earns the dataset a longer one.
    const stale = await rawMap(d.id);
    expect(stale.dataset.cachedBytes).toBe(PREFIX);
    await waitFor('the extension to commit', async () =>
      (await cachedView(d.id)).cachedBytes === SIZE ? true : undefined,
    );
    const status = await cache();
    expect(status.evictions).toMatchObject({ extensions: 1, extendedBytes: SIZE - PREFIX });
    // The extension sealed what it stored, like any import: no plain text on any donor.
    expect(await markersOnDonors(c.agentDirs, d.id)).toBe(0);
    // Donors imported their own morsels by Range, pinned to the imported version.
    const extension = src.seen.slice(beforeExtension);
    expect(extension.length).toBeGreaterThanOrEqual(15);
    expect(extension.every((r) => r.headers.range && r.headers['if-match'] === src.etag)).toBe(
      true,
    );
    // A reader whose map predates the commit still reads it whole: the old prefix from donors,
    // the rest patched from where that map's prefix ends.
    await attachSuffixPlan(c.tm.admin, stale);
    expect(stale.suffix).toMatchObject({ firstMorsel: 6, endMorsel: 21 });
    expect(sha256Hex(await readAll(stale))).toBe(want);

    // Now fully cached: a read patches nothing and never touches the source.
    const sessions = async () =>
      (await c.tm.admin.request<PatchSessionView[]>('GET', '/patch-sessions')).filter(
        (s) => s.datasetId === d.id,
      ).length;
    const [sessionsBefore, seenBefore] = [await sessions(), src.seen.length];
    const out = await c.get(d.id);
    expect(out).toMatchObject({ bytes: SIZE, sha256: want });
    expect(src.seen.length).toBe(seenBefore);
    expect(await sessions()).toBe(sessionsBefore);
    const view = await c.tm.admin.request<DatasetView>('GET', `/datasets/${d.id}`);
    expect(view.cachedBytes).toBe(SIZE);
  });

  it('abandons an extension when the source changes; the old prefix stays readable', async () => {
    const { src, d } = await prefixDataset(92, 'extend/changing.bin');
    const original = Buffer.from(src.content);
    for (const _ of [1, 2]) expect((await c.get(d.id)).sha256).toBe(sha256Hex(original));
    await jobsSettled(d.id);
    const baseline = await storedBytes();
    const extensionsBefore = (await cache()).evictions.extensions;

    // Three more source requests get the old bytes (partial morsels), then the content changes.
    const from = src.seen.length;
    src.set({ changeAfter: src.requests + 3 });
    await rawMap(d.id);
    await waitFor('the extension to be abandoned', async () => {
      const v = await cachedView(d.id);
      const settled = src.seen.length > from + 3 && v.extendingToBytes === undefined;
      return settled ? v : undefined;
    });
    await jobsSettled(d.id);
    expect(src.seen.slice(from).filter((r) => r.status === 206)).toHaveLength(3);

    expect(await cachedView(d.id)).toMatchObject({ cachedBytes: PREFIX });
    expect((await cache()).evictions.extensions).toBe(extensionsBefore);
    // Reservations released, partial morsels deleted on the donors.
    const agents: AgentView[] = await c.tm.agents();
    expect(agents.map((a) => a.reservedBytes)).toEqual(agents.map(() => 0));
    await waitFor('donors to report the partial morsels freed', async () =>
      (await storedBytes()) === baseline ? true : undefined,
    );

    // The old prefix is still the dataset's readable part, verified against its hashes.
    const map = await rawMap(d.id);
    expect(map.dataset.cachedBytes).toBe(PREFIX);
    const reader = new DatasetReader(map);
    try {
      for (let m = 0; m < 6; m++) {
        const bytes = await reader.readMorsel(m);
        expect(sha256Hex(bytes)).toBe(sha256Hex(original.subarray(m * MiB, (m + 1) * MiB)));
      }
    } finally {
      await reader.close();
    }
  });
});
