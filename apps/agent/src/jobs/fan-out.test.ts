import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MiB,
  donorsOfMorsel,
  morselCount,
  type DatasetMap,
  type DatasetView,
  type ImportResponse,
} from '@freeloader/protocol';
import { auditReplicas } from '@freeloader/striping';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { internalsOf, waitFor } from '../test/cluster-harness.js';
import { flipByte } from '../test/damage.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';

// Issue 15's fan-out, on real agents and real PostgreSQL: an n=2 import fetches copy 0 from the
// source and copy 1 donor to donor, so the source serves the dataset about once (not twice),
// and a copy 1 whose donor-side bytes are bad is refused (hash check) and taken from the source.
/** Source rate per connection while a test sets up (bytes/s): no 1 MiB morsel completes. */
const HELD_SOURCE_BPS = 8 * 1024;
let c: DataCluster;
const servers: TestServer[] = [];

beforeAll(async () => {
  // Slow failure detection: one test freezes a donor for a while on purpose.
  c = await startDataCluster(3, '64MiB', {
    manager: { staleAfterMs: 60_000, deadAfterMs: 120_000 },
  });
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await c?.close();
});

async function source(size: number, seed: number): Promise<TestServer> {
  const src = await startTestServer({ size, seed });
  servers.push(src);
  return src;
}

const pg = () => internalsOf(c.tm.manager).pg;

/** Import results of a dataset's import jobs, by agent. */
async function importResults(
  datasetId: string,
): Promise<Map<string, { sourceMorsels: number; fannedOut: number }>> {
  const { rows } = await pg().query<{
    agent_id: string;
    result: { sourceMorsels: number; fannedOut: number };
  }>(`SELECT agent_id, result FROM jobs WHERE dataset_id = $1 AND kind = 'import'`, [datasetId]);
  return new Map(rows.map((r) => [r.agent_id, r.result]));
}

describe('import fan-out (n = 2)', () => {
  it('serves the dataset from the source about once; copy 1 comes donor to donor', async () => {
    const size = 24 * MiB + 321;
    const src = await source(size, 61);
    const d = await c.importAndWait({ uri: src.url, name: 'fan/once.bin', replicas: 2 });
    expect(d.state, d.error ?? '').toBe('ready');
    // Copy 0 once, plus at most a little probing: not the 2× of fetching every copy.
    expect(src.bodyBytes).toBeGreaterThanOrEqual(size);
    expect(src.bodyBytes).toBeLessThan(size * 1.05);
    const map = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${d.id}/map`);
    const morsels = morselCount(size, d.morselSize);
    auditReplicas(map.extents, morsels, 2);
    const results = [...(await importResults(d.id)).values()];
    expect(results.reduce((n, r) => n + r.fannedOut, 0)).toBe(morsels);
    expect(results.reduce((n, r) => n + r.sourceMorsels, 0)).toBe(morsels);
    expect((await c.get(d.id)).sha256).toBe(sha256Hex(src.content));
  }, 180_000);

  it('refuses a fanned-out copy whose bytes do not match the hash, and takes it from the source', async () => {
    const size = 8 * MiB;
    const morsels = Array.from({ length: 8 }, (_, m) => m);
    const src = await source(size, 62);
    // The source trickles until the donor is frozen: otherwise, on a busy machine, the donors
    // could store copy 0 and the frozen one fan out a good copy 1 (fannedOut > 0) before the test
    // gets from the import's answer to the SIGSTOP.
    src.set({ bytesPerSecond: HELD_SOURCE_BPS });
    const res = await c.tm.admin.request<ImportResponse>('POST', '/datasets', {
      uri: src.url,
      name: 'fan/verified.bin',
      replicas: 2,
      morselSize: MiB,
    });
    const id = res.dataset!.id;
    const map = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${id}/map`);
    const heldBy = (agentId: string): number[] =>
      morsels.filter((m) => donorsOfMorsel(map.extents, m).includes(agentId));
    const primaryOf = (m: number): string => donorsOfMorsel(map.extents, m)[0]!;
    // Freeze the donor with the most copy-1 morsels: the others store their copy 0 meanwhile.
    const copy1 = (agentId: string): number[] =>
      heldBy(agentId).filter((m) => primaryOf(m) !== agentId);
    const frozen = [...c.agents].sort(
      (x, y) => copy1(y.agentId).length - copy1(x.agentId).length,
    )[0]!;
    const others = c.agents.filter((a) => a !== frozen);
    expect(copy1(frozen.agentId).length).toBeGreaterThan(0);
    frozen.child.kill('SIGSTOP');
    src.set({ bytesPerSecond: undefined });
    try {
      for (const other of others) {
        const primaries = heldBy(other.agentId).filter((m) => primaryOf(m) === other.agentId);
        await waitFor(
          `donor ${other.agentId} to report its copy-0 morsels`,
          async () => {
            const { rows } = await pg().query<{ done_bytes: string }>(
              `SELECT done_bytes FROM jobs
                 WHERE dataset_id = $1 AND agent_id = $2 AND kind = 'import'`,
              [id, other.agentId],
            );
            return Number(rows[0]?.done_bytes ?? -1) >= primaries.length * MiB || undefined;
          },
          120_000,
          100,
        );
        // Bit rot behind the store's back in every copy-0 morsel (slots follow index order).
        const dataFile = join(
          c.agentDirs[c.agents.indexOf(other)]!,
          'store',
          'datasets',
          `${id}.data`,
        );
        const held = heldBy(other.agentId);
        for (const m of primaries) await flipByte(dataFile, held.indexOf(m) * MiB + 1_000);
      }
    } finally {
      frozen.child.kill('SIGCONT');
    }
    const d = await waitFor(
      'the import to settle',
      async () => {
        const v = await c.tm.admin.request<DatasetView>('GET', `/datasets/${id}`);
        return v.state === 'ready' || v.state === 'failed' ? v : undefined;
      },
      120_000,
      100,
    );
    expect(d.state, d.error ?? '').toBe('ready');
    // Each bad copy was fetched, refused by its hash, and taken from the source instead.
    const thawed = (await importResults(id)).get(frozen.agentId)!;
    expect(thawed.fannedOut).toBe(0);
    expect(thawed.sourceMorsels).toBe(heldBy(frozen.agentId).length);
    // And it stored good bytes only (its data file's slots follow index order): each slot's
    // SHA-256 is the map's for that morsel, the hash of the stored (sealed) bytes.
    const stored = await readFile(
      join(c.agentDirs[c.agents.indexOf(frozen)]!, 'store', 'datasets', `${id}.data`),
    );
    const { hashes } = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${id}/map`);
    heldBy(frozen.agentId).forEach((m, slot) => {
      expect(sha256Hex(stored.subarray(slot * MiB, (slot + 1) * MiB)), `morsel ${m}`).toBe(
        hashes.slice(m * 64, m * 64 + 64),
      );
    });
    // The reader's check: the whole dataset reads back as the source's bytes.
    expect((await c.get(id)).sha256).toBe(sha256Hex(src.content));
  }, 300_000);
});
