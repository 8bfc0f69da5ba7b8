import { expect } from 'vitest';
import type { DatasetMap } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import type { GetSummary } from '../client/get-dataset.js';
import { waitForAgentState, type SpawnedAgent } from './cluster-harness.js';
import { startDataCluster, type DataCluster } from './data-cluster.js';

/** A data cluster whose donors the degraded-read tests freeze and kill (issue 15). */
export interface DegradedCluster {
  c: DataCluster;
  /** Import a test source of `size` bytes over `width` donors, once every running donor is live. */
  importDataset(
    name: string,
    size: number,
    seed: number,
    width: number,
  ): Promise<{ src: TestServer; id: string }>;
  /**
   * An in-order `get` of `id` during which `victim` is frozen (SIGSTOP) once `at` morsels have
   * arrived; thawed afterwards. Fails the test if the read ended before the freeze.
   */
  /**
   * The donor an in-order read of `id` prefers (highest predicted rate in the map; the first
   * donor when no rate is known): with two copies, a slower donor's morsels are read from its
   * twin, so freezing it would go unnoticed.
   */
  preferredDonor(id: string): Promise<SpawnedAgent>;
  getFreezing(
    id: string,
    victim: SpawnedAgent,
    at?: number,
  ): Promise<GetSummary & { sha256: string }>;
  /** Thaw frozen donors (a stopped process ignores SIGTERM), then stop sources and cluster. */
  close(): Promise<void>;
}

/**
 * One kit for `get`'s and the mount's degraded-read tests: a donor thawed by the previous test
 * must be live again before the next import places morsels on it, and close must thaw first.
 *
 * @example const k = await startDegradedCluster(4); const { id } = await k.importDataset('x', 8 * MiB, 1, 4);
 */
export async function startDegradedCluster(donors: number): Promise<DegradedCluster> {
  // Room for every copy of a file's datasets: two copies of replicated-read's 96 MiB dataset
  // alone take 64 MiB on each of three donors; a full donor would get no copy of the next one.
  const c = await startDataCluster(donors, '160MiB');
  const servers: TestServer[] = [];
  const running = (): SpawnedAgent[] =>
    c.agents.filter((a) => a.child.exitCode === null && a.child.signalCode === null);
  return {
    c,
    async importDataset(name, size, seed, width) {
      await Promise.all(running().map((a) => waitForAgentState(c.tm, a.agentId, 'live')));
      const src = await startTestServer({ size, seed });
      servers.push(src);
      // Round-robin: every donor holds its share, so the one a test freezes or kills serves part
      // of the read. The default (predictive once the manager has delivery rates, i.e. after the
      // file's first read) can give a donor measured slow under load no morsel at all.
      const d = await c.importAndWait({ uri: src.url, name, width, policy: 'round-robin' });
      expect(d.state).toBe('ready');
      return { src, id: d.id };
    },
    async preferredDonor(id) {
      const map = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${id}/map`);
      // Among the dataset's donors (before any read none has an observed rate), the fastest.
      const rate = (agentId: string): number => map.donors.find((d) => d.id === agentId)?.rate ?? 0;
      const holders = running().filter((a) => map.donors.some((d) => d.id === a.agentId));
      return holders.sort((a, b) => rate(b.agentId) - rate(a.agentId))[0]!;
    },
    async getFreezing(id, victim, at = 4) {
      let frozen = false;
      try {
        const out = await c.get(id, {
          onMorsel: (n) => {
            if (n === at && !frozen) {
              frozen = true;
              victim.child.kill('SIGSTOP');
            }
          },
        });
        expect(frozen).toBe(true);
        return out;
      } finally {
        victim.child.kill('SIGCONT');
      }
    },
    async close() {
      for (const a of c.agents) a.child.kill('SIGCONT');
      await Promise.all(servers.map((s) => s.close()));
      await c.close();
    },
  };
}
