import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MiB,
  donorsOfMorsel,
  hasMorselTag,
  type AgentView,
  type CacheCut,
  type DatasetMap,
  type DatasetView,
  type PatchSessionView,
} from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { DatasetReader } from '../client/dataset-reader.js';
import { fetchMap } from '../client/fetch-map.js';
import { getDataset } from '../client/get-dataset.js';
import {
  spawnAgent,
  waitFor,
  waitForAgentState,
  type SpawnedAgent,
} from '../test/cluster-harness.js';
import {
  rejectsWith,
  sha256Hex,
  startDataCluster,
  type DataCluster,
} from '../test/data-cluster.js';
import { markedContent, markersOnDonors } from '../test/plaintext-marker.js';

// Prefix caching and collective download (seed 002) on real agent processes: three storage
// donors (16 MiB each) and two bandwidth-only patching nodes, against real HTTP sources.
let c: DataCluster;
const bandwidthOnly: SpawnedAgent[] = [];
const servers: TestServer[] = [];
const serve = async (opts: Parameters<typeof startTestServer>[0]): Promise<TestServer> => {
  const s = await startTestServer(opts);
  servers.push(s);
  return s;
};

beforeAll(async () => {
  c = await startDataCluster(3, '16MiB');
  const { token } = await c.tm.createJoinToken({ maxUses: 2 });
  for (const i of [1, 2]) {
    bandwidthOnly.push(
      await spawnAgent({
        managerUrl: c.tm.url,
        token,
        dir: `${c.agentDirs[0]!}-bw${i}`,
        name: `bandwidth-${i}`,
        extraArgs: ['--bandwidth-only'],
      }),
    );
  }
  await Promise.all(bandwidthOnly.map((a) => waitForAgentState(c.tm, a.agentId, 'live')));
}, 180_000);

afterAll(async () => {
  await Promise.all(bandwidthOnly.map((a) => a.stop('SIGKILL')));
  await Promise.all(servers.map((s) => s.close()));
  await c?.close();
});

const cutTo = (id: string, cachedBytes: number) =>
  c.tm.admin.request<CacheCut>('PUT', `/datasets/${id}/cached`, { cachedBytes });
const sessionsOf = async (datasetId: string) =>
  (await c.tm.admin.request<PatchSessionView[]>('GET', '/patch-sessions')).filter(
    (s) => s.datasetId === datasetId,
  );
/**
 * A dataset imported whole (encrypted, the default), then cut back to a prefix of `prefixMiB`:
 * the reader checks the plain suffix the patching nodes serve against the map's tags.
 */
async function prefixDataset(src: TestServer, name: string, prefixMiB: number) {
  const d = await c.importAndWait({ uri: src.url, name });
  expect(d.state).toBe('ready');
  const cut = await cutTo(d.id, prefixMiB * MiB);
  expect(cut).toMatchObject({ kind: 'trim', toBytes: prefixMiB * MiB });
  // Donors drop their tail morsels (delete jobs) before the test reads.
  await waitFor('the trim to finish', async () => {
    const t = await c.tm.admin.request<{ kind: string; state: string; datasetId: string }[]>(
      'GET',
      '/transfers',
    );
    return t.some((j) => j.datasetId === d.id && j.kind === 'delete' && j.state !== 'done')
      ? undefined
      : true;
  });
  return d;
}

// Five agent processes on a shared machine: generous per-test time.
describe('prefix caching with collective download', { timeout: 180_000 }, () => {
  it('reads a 30 % prefix dataset byte-identical: prefix from donors, suffix patched', async () => {
    const src = await serve({ size: 20 * MiB + 7, seed: 71 });
    const d = await prefixDataset(src, 'prefix/thirty.bin', 6);
    const view = await c.tm.admin.request<DatasetView>('GET', `/datasets/${d.id}`);
    expect(view.cachedBytes).toBe(6 * MiB);
    const before = src.seen.length;

    const out = await c.get(d.id);
    expect(out.bytes).toBe(20 * MiB + 7);
    expect(out.sha256).toBe(sha256Hex(src.content));

    // The manager planned the suffix over the bandwidth-only nodes first.
    const [session] = await sessionsOf(d.id);
    expect(session).toMatchObject({ firstMorsel: 6, endMorsel: 21 });
    const nodes = session!.nodes.map((n) => n.id);
    for (const a of bandwidthOnly) expect(nodes).toContain(a.agentId);
    // Collective download: the patching nodes asked for large contiguous ranges, not morsels.
    const spans = src.seen.slice(before).flatMap((r) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(String(r.headers.range ?? ''));
      return m ? [Number(m[2]) - Number(m[1]) + 1] : [];
    });
    expect(Math.max(...spans)).toBeGreaterThan(MiB);
    expect(spans.every((n) => n >= MiB || n === 7)).toBe(true);
    // Every patch request was pinned to the imported version.
    expect(
      src.seen.slice(before).filter((r) => r.headers.range && !r.headers['if-match']),
    ).toHaveLength(0);

    // Into a file: morsels land at their offsets in arrival order, prefix and suffix mixed.
    const dir = await mkdtemp(join(tmpdir(), 'fl-prefix-'));
    const fh = await open(join(dir, 'out.bin'), 'w');
    try {
      const summary = await getDataset({ manager: c.tm.admin, dataset: d.id, sink: fh });
      expect(summary.bytes).toBe(20 * MiB + 7);
    } finally {
      await fh.close();
    }
    expect(sha256Hex(await readFile(join(dir, 'out.bin')))).toBe(sha256Hex(src.content));
    await rm(dir, { recursive: true, force: true });
  });

  it('serves random suffix reads through the reader API (the mount path)', async () => {
    const src = await serve({ size: 12 * MiB, seed: 72 });
    const d = await prefixDataset(src, 'prefix/random.bin', 4);
    const map = await fetchMap(c.tm.admin, d.id);
    expect(map.suffix).toMatchObject({ firstMorsel: 4, endMorsel: 12 });
    const reader = new DatasetReader(map);
    try {
      for (const m of [9, 2, 11, 4, 7]) {
        const bytes = await reader.readMorsel(m);
        expect(sha256Hex(bytes)).toBe(sha256Hex(src.content.subarray(m * MiB, (m + 1) * MiB)));
      }
    } finally {
      await reader.close();
    }
  });

  it('caches only the model prefix when the cache is full, and learns the suffix hashes', async () => {
    const src = await serve({ content: markedContent(56 * MiB + 3, 73) });
    // A source as fast as the client: the model asks only to cover the startup latency.
    await c.tm.admin.request('POST', '/sources/measurements', {
      uri: src.url,
      latencyS: 0,
      patchRate: 1e12,
    });
    const d = await c.importAndWait({ uri: src.url, name: 'prefix/model.bin' });
    expect(d.state).toBe('ready');
    expect(d.cachedBytes).toBeLessThan(d.sizeBytes);
    expect(d.cachedBytes % MiB).toBe(0);
    // Imported as a prefix, and sealed all the same: no donor store holds its plain text.
    expect(await markersOnDonors(c.agentDirs, d.id)).toBe(0);
    const out = await c.get(d.id);
    expect(out.sha256).toBe(sha256Hex(src.content));
    // The patching nodes hashed (and, holding the key, tagged) what they downloaded: later
    // reads verify against the manager's tags.
    const map = await waitFor('suffix hashes and tags reported', async () => {
      const m = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${d.id}/map`);
      const tagged = Array.from({ length: 57 }, (_, i) => hasMorselTag(m.tags ?? '', i));
      return m.hashes.length === 57 * 64 &&
        !m.hashes.includes('0'.repeat(64)) &&
        !tagged.includes(false)
        ? m
        : undefined;
    });
    expect(map.dataKey).toBeDefined();
    // Of the sealed bytes, as a donor would store them: never the plain text's.
    const last = 56 * MiB;
    expect(map.hashes.slice(56 * 64)).not.toBe(sha256Hex(src.content.subarray(last)));
    const again = await c.get(d.id);
    expect(again.sha256).toBe(sha256Hex(src.content));
  });

  it('fails the read clearly when the source changes mid-patch', async () => {
    // Slow, and 1 MiB requests: the patch is still downloading when the source changes.
    const src = await serve({ size: 16 * MiB, seed: 74 });
    await c.tm.admin.request('POST', '/sources/measurements', {
      uri: src.url,
      requestSize: MiB,
    });
    const d = await prefixDataset(src, 'prefix/changing.bin', 4);
    src.set({ bytesPerSecond: 2 * MiB });
    let changed = false;
    const err = await rejectsWith(
      c.get(d.id, {
        onMorsel: (n) => {
          if (n === 1 && !changed) {
            changed = true;
            src.setContent(Buffer.from(src.content).fill(7, 0, 16));
          }
        },
      }),
      'SOURCE_CHANGED',
    );
    expect(changed).toBe(true);
    expect(err.message).toMatch(/chang/i);
  });

  it('never stores a morsel on a bandwidth-only agent', async () => {
    const agents = await c.tm.agents();
    for (const a of bandwidthOnly) {
      expect(agents.find((x: AgentView) => x.id === a.agentId)).toMatchObject({
        bandwidthOnly: true,
        quotaBytes: 0,
        usedBytes: 0,
      });
      const health = (await (await fetch(`${a.url}/v1/health`)).json()) as { usedBytes: number };
      expect(health.usedBytes).toBe(0);
    }
    const listing = await c.tm.admin.request<{ datasets: DatasetView[] }>(
      'GET',
      '/namespace?path=prefix',
    );
    expect(listing.datasets.length).toBeGreaterThanOrEqual(4);
    for (const d of listing.datasets) {
      const map = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${d.id}/map`);
      const count = Math.ceil(map.dataset.cachedBytes / map.dataset.morselSize);
      for (let m = 0; m < count; m++) {
        for (const donor of donorsOfMorsel(map.extents, m)) {
          expect(bandwidthOnly.map((a) => a.agentId)).not.toContain(donor);
        }
      }
    }
  });

  it('replaces a patching node killed mid-read and still returns the right bytes', async () => {
    const src = await serve({ size: 24 * MiB, seed: 75 });
    const d = await prefixDataset(src, 'prefix/kill.bin', 7);
    // A slow source keeps every patching node busy for seconds, so the kill lands while the
    // victim still has morsels to deliver however slowly a busy machine runs the client: it is
    // made as soon as the first patched morsel (the 8th the client receives) is in.
    src.set({ bytesPerSecond: 2 * MiB });
    const victim = bandwidthOnly[1]!;
    let killed = false;
    const out = await c.get(d.id, {
      onMorsel: (n) => {
        if (n === 8 && !killed) {
          killed = true;
          victim.child.kill('SIGKILL');
        }
      },
    });
    expect(killed).toBe(true);
    expect(out.sha256).toBe(sha256Hex(src.content));
    const sessions = await sessionsOf(d.id);
    expect(sessions.some((s) => s.state === 'replaced')).toBe(true);
    // The replacement session does without the dead node.
    expect(sessions[0]!.nodes.map((n) => n.id)).not.toContain(victim.agentId);
  });
});
