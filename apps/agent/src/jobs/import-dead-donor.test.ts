import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KiB,
  MiB,
  donorsOfMorsel,
  morselCount,
  morselTagOf,
  MORSEL_TAG_BYTES,
  type DatasetMap,
  type DatasetView,
  type ImportResponse,
} from '@freeloader/protocol';
import { auditReplicas } from '@freeloader/striping';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { internalsOf, waitFor } from '../test/cluster-harness.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { markedContent, markersOnDonors } from '../test/plaintext-marker.js';

// Issue 15: a donor killed with SIGKILL in the middle of an n=2 import (real agents, real
// PostgreSQL). Once the manager declares it dead, its share moves to live donors that hold no
// other copy of those morsels, its reservation is released, the import finishes and `get` is
// byte-identical.
let c: DataCluster;
/** The tag the manager shows for a morsel no donor reported one for. */
const NO_TAG = Buffer.alloc(MORSEL_TAG_BYTES);
let src: TestServer;

beforeAll(async () => {
  c = await startDataCluster(4, '64MiB');
  // Slow enough that the import is still running when the donor is killed.
  src = await startTestServer({ size: 16 * MiB + 77, seed: 71, bytesPerSecond: 256 * KiB });
}, 180_000);

afterAll(async () => {
  await src?.close();
  await c?.close();
});

const pg = () => internalsOf(c.tm.manager).pg;

/**
 * Start an n=2 import of `from` on `on`, SIGKILL a donor part-way through its import job, lift
 * the source's rate limit, and wait for the import to settle; the dataset and the victim.
 */
async function killMidImport(
  on: DataCluster,
  from: TestServer,
  name: string,
): Promise<{ d: DatasetView; victim: string }> {
  const res = await on.tm.admin.request<ImportResponse>('POST', '/datasets', {
    uri: from.url,
    name,
    replicas: 2,
  });
  const id = res.dataset!.id;
  const victim = await waitFor(
    'a donor part-way through its import job',
    async () => {
      const { rows } = await internalsOf(on.tm.manager).pg.query<{ agent_id: string }>(
        `SELECT agent_id FROM jobs WHERE dataset_id = $1 AND kind = 'import'
           AND state = 'running' AND done_bytes > 0 AND done_bytes < total_bytes LIMIT 1`,
        [id],
      );
      return rows[0]?.agent_id;
    },
    120_000,
    50,
  );
  await on.agents.find((a) => a.agentId === victim)!.stop('SIGKILL');
  from.set({ bytesPerSecond: undefined });
  const d = await waitFor(
    'the import to settle',
    async () => {
      const v = await on.tm.admin.request<DatasetView>('GET', `/datasets/${id}`);
      return v.state === 'ready' || v.state === 'failed' ? v : undefined;
    },
    180_000,
    200,
  );
  return { d, victim };
}

describe('a donor dies mid-import', () => {
  it('re-places its share on other donors; the import finishes byte-identical', async () => {
    const { d, victim } = await killMidImport(c, src, 'dead/mid-import.bin');
    const id = d.id;
    expect(d.state, d.error ?? '').toBe('ready');

    const map = await c.tm.admin.request<DatasetMap>('GET', `/datasets/${id}/map`);
    const morsels = morselCount(d.sizeBytes, d.morselSize);
    // Two copies of every morsel, never two on one donor, none on the dead one.
    auditReplicas(map.extents, morsels, 2);
    for (let m = 0; m < morsels; m++) {
      expect(donorsOfMorsel(map.extents, m), `morsel ${m}`).not.toContain(victim);
    }

    const { rows: jobs } = await pg().query<{ state: string; error_code: string | null }>(
      `SELECT state, error_code FROM jobs WHERE dataset_id = $1 AND agent_id = $2 AND kind = 'import'`,
      [id, victim],
    );
    expect(jobs).toEqual([{ state: 'failed', error_code: 'UNAVAILABLE' }]);
    const { rows: held } = await pg().query<{ state: string }>(
      `SELECT state FROM reservations WHERE dataset_id = $1 AND agent_id = $2`,
      [id, victim],
    );
    expect(held.map((r) => r.state)).toEqual(['released']);

    expect((await c.get(id)).sha256).toBe(sha256Hex(src.content));
  }, 420_000);
});

describe('a donor dies mid-import with nowhere to move its share', () => {
  let two: DataCluster;
  let slow: TestServer;
  beforeAll(async () => {
    two = await startDataCluster(2, '64MiB');
    slow = await startTestServer({
      content: markedContent(12 * MiB + 5, 72),
      bytesPerSecond: 256 * KiB,
    });
  }, 180_000);
  afterAll(async () => {
    await slow?.close();
    await two?.close();
  });

  it('n = 2 on two donors: the survivor finishes the import, shown under-replicated', async () => {
    const { d, victim } = await killMidImport(two, slow, 'dead/covered.bin');
    expect(d.state, d.error ?? '').toBe('ready');
    // Its copies stay placed (lost, for repair to re-create); health says so.
    expect(d.health).toMatchObject({ wanted: 2, liveMin: 1 });
    expect(d.health!.atRisk).toBeGreaterThan(0);
    expect(two.agents.some((a) => a.agentId === victim)).toBe(true);
    // Encrypted all the same (it once stored its morsels in clear here): every morsel has a
    // tag, and the survivor's store holds no plaintext.
    const map = await two.tm.admin.request<DatasetMap>('GET', `/datasets/${d.id}/map`);
    const morsels = morselCount(d.sizeBytes, d.morselSize);
    expect(map.dataKey).toBeDefined();
    for (let m = 0; m < morsels; m++) {
      expect(morselTagOf(map.tags!, m).equals(NO_TAG), `tag of morsel ${m}`).toBe(false);
    }
    expect(map.hashes.slice(0, 64)).not.toBe(sha256Hex(slow.content.subarray(0, d.morselSize)));
    const survivor = two.agents.findIndex((a) => a.agentId !== victim);
    expect(await markersOnDonors([two.agentDirs[survivor]!], d.id)).toBe(0);
    expect((await two.get(d.id)).sha256).toBe(sha256Hex(slow.content));
  }, 420_000);
});
