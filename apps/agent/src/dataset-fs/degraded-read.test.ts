import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB, type DatasetMap } from '@freeloader/protocol';
import { waitFor } from '../test/cluster-harness.js';
import { sha256Hex, type DataCluster } from '../test/data-cluster.js';
import { startDegradedCluster, type DegradedCluster } from '../test/degraded-cluster.js';
import { DatasetFs } from './dataset-fs.js';

// The mount's reading layer shares `get`'s degraded reads (issue 15): against real agents, a
// frozen donor is dropped mid-read and a donor the map no longer calls live is routed around.
// Reads go through DatasetFs on this thread (what FUSE calls), so no kernel mount is needed.
let k: DegradedCluster;
let c: DataCluster;

beforeAll(async () => {
  k = await startDegradedCluster(3);
  c = k.c;
  // An upper bound: at load average 30 on 2 cores starting this cluster took over 180 s.
}, 300_000);

afterAll(() => k?.close());

const importDataset = (name: string, size: number, seed: number) =>
  k.importDataset(name, size, seed, 3);

/** Read `/path` through a fresh DatasetFs in 128 KiB kernel-sized reads; its SHA-256 and log. */
async function readThroughFs(
  path: string,
  size: number,
  onBytes?: (done: number) => void,
): Promise<{ sha256: string; log: string[] }> {
  const log: string[] = [];
  const fs = new DatasetFs({ manager: c.tm.admin, log: (m) => log.push(m) });
  try {
    await fs.ready();
    const handle = await fs.open(path, 0);
    const out = Buffer.alloc(size);
    const chunk = Buffer.alloc(128 * 1024);
    for (let at = 0; at < size;) {
      const n = fs.readCached(handle, chunk, at) ?? (await fs.read(handle, chunk, at));
      chunk.copy(out, at, 0, n);
      at += n;
      onBytes?.(at);
    }
    await fs.release(handle);
    return { sha256: sha256Hex(out), log };
  } finally {
    await fs.close();
  }
}

describe('mount reads with a degraded donor', () => {
  it('drop a donor frozen (SIGSTOP) mid-read and stay byte-identical', async () => {
    const size = 30 * MiB;
    const { src, id } = await importDataset('degfs/frozen.bin', size, 41);
    // Not a fixed donor: with two copies the reader takes a slower donor's morsels from its twin.
    const victim = await k.preferredDonor(id);
    let frozen = false;
    try {
      const out = await readThroughFs('/degfs/frozen.bin', size, (done) => {
        if (done >= 3 * MiB && !frozen) {
          frozen = true;
          victim.child.kill('SIGSTOP');
        }
      });
      expect(frozen).toBe(true);
      expect(out.sha256).toBe(sha256Hex(src.content));
      expect(out.log.some((m) => m.startsWith(`donor ${victim.agentId} left out of reads`))).toBe(
        true,
      );
    } finally {
      victim.child.kill('SIGCONT');
    }
  }, 120_000);

  it('never ask a donor the map calls not live', async () => {
    const size = 12 * MiB;
    const { src, id } = await importDataset('degfs/killed.bin', size, 42);
    const victim = c.agents[0]!;
    await victim.stop('SIGKILL');
    await waitFor(
      `the map to call ${victim.agentId} not live`,
      async () => {
        const map = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${id}/map`);
        const entry = map.donors.find((d) => d.id === victim.agentId);
        return entry && entry.state !== 'live' ? true : undefined;
      },
      60_000,
      200,
    );
    const out = await readThroughFs('/degfs/killed.bin', size);
    expect(out.sha256).toBe(sha256Hex(src.content));
    // Any request to the dead donor would have failed (connection refused) and been logged.
    expect(out.log.filter((m) => m.includes(victim.agentId))).toEqual([]);
  }, 120_000);
});
