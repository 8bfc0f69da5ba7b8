import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { waitFor } from '../test/cluster-harness.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { repairKit, type RepairKit } from '../test/repair-kit.js';

// Repair within its cap b, and across a manager restart, on three real donors (issue 15).
// b is small (2 MiB/s) so a repair lasts long enough to measure and to interrupt.
const B_DONOR = 2 * MiB;
let c: DataCluster;
let k: RepairKit;
const servers: TestServer[] = [];

beforeAll(async () => {
  c = await startDataCluster(3, '64MiB', {
    repairDonorRateBps: B_DONOR,
    repairAfterMs: 60_000,
    repairTickMs: 300,
  });
  k = repairKit(c.tm);
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await c?.close();
});

async function importDataset(name: string, size: number, seed: number) {
  const src = await startTestServer({ size, seed });
  servers.push(src);
  const d = await c.importAndWait({ uri: src.url, name, width: 3 });
  expect(d.state).toBe('ready');
  return { src, id: d.id };
}

interface JobRow extends Record<string, unknown> {
  total_bytes: string;
  created: number;
  finished: number;
  result: { bytes: number; seconds: number } | null;
}

describe('the per-donor repair cap b', () => {
  it('holds: each repair job moves its bytes at b (within 10 %), and never faster overall', async () => {
    const { id } = await importDataset('cap/a.bin', 16 * MiB, 51);
    await k.setReplicas(id, 2);
    await k.waitForCopies(id, 2, [], 180_000);
    const jobs = await k.query<JobRow>(
      `SELECT total_bytes, extract(epoch FROM created_at)::float8 AS created,
              extract(epoch FROM updated_at)::float8 AS finished, result
       FROM jobs WHERE kind = 'repair' AND dataset_id = $1 AND state = 'done'`,
      [id],
    );
    // Three donors: a job's destination and its sources are all of them, so jobs run one at a
    // time and the whole repair is bounded by b too.
    const long = jobs.filter((j) => (j.result?.bytes ?? 0) >= 4 * MiB);
    expect(long.length).toBeGreaterThan(0);
    for (const j of long) {
      const rate = j.result!.bytes / j.result!.seconds;
      expect(rate).toBeGreaterThan(0.9 * B_DONOR);
      expect(rate).toBeLessThan(1.1 * B_DONOR);
    }
    const bytes = jobs.reduce((s, j) => s + Number(j.total_bytes), 0);
    const window =
      Math.max(...jobs.map((j) => j.finished)) - Math.min(...jobs.map((j) => j.created));
    expect(bytes).toBe(16 * MiB);
    expect(bytes / window).toBeLessThan(1.1 * B_DONOR);
  }, 240_000);
});

describe('a manager restart mid-repair', () => {
  it('resumes: every morsel gets its copies, none twice', async () => {
    const { src, id } = await importDataset('cap/crash.bin', 12 * MiB, 52);
    await k.setReplicas(id, 2);
    await waitFor(
      'a first unit to be committed',
      async () =>
        (await k.query('SELECT 1 FROM repair_done WHERE dataset_id = $1', [id])).length > 0 ||
        undefined,
      120_000,
      100,
    );
    const left = await k.query('SELECT 1 FROM repair_units WHERE dataset_id = $1', [id]);
    expect(left.length).toBeGreaterThan(0);
    await c.tm.stop();
    await c.tm.start();
    await k.waitForCopies(id, 2, [], 240_000);
    expect(await k.query('SELECT 1 FROM repair_units WHERE dataset_id = $1', [id])).toEqual([]);
    await src.close();
    expect((await c.get(id)).sha256).toBe(sha256Hex(src.content));
  }, 360_000);
});
