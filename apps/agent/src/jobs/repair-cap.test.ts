import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { waitFor } from '../test/cluster-harness.js';
import { startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { repairKit, type RepairKit } from '../test/repair-kit.js';

// Repair within its cap b on three real donors (issue 15). b is small (2 MiB/s) so a repair
// lasts long enough to measure. (A manager killed mid-repair: repair-crash.test.ts.)
const B_DONOR = 2 * MiB;
let c: DataCluster;
let k: RepairKit;
const servers: TestServer[] = [];

beforeAll(async () => {
  c = await startDataCluster(3, '64MiB', {
    manager: { repairDonorRateBps: B_DONOR, repairAfterMs: 60_000, repairTickMs: 300 },
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
  // One copy: the test raises n to 2 afterwards so that repair makes the second copy.
  const d = await c.importAndWait({ uri: src.url, name, width: 3, replicas: 1 });
  expect(d.state).toBe('ready');
  return { src, id: d.id };
}

interface JobRow extends Record<string, unknown> {
  total_bytes: string;
  to: string;
  sources: string[];
  created: number;
  finished: number;
  result: { bytes: number; seconds: number; transferSeconds: number } | null;
}

describe('the per-donor repair cap b', () => {
  it('holds: each repair job moves its bytes at b (within 10 %); each donor sends and receives within b', async () => {
    const { id } = await importDataset('cap/a.bin', 24 * MiB, 51);
    await k.setReplicas(id, 2);
    await k.waitForCopies(id, 2, [], 180_000);
    // The last job reports done just after its last commit.
    await waitFor(
      'the repair jobs to finish',
      async () =>
        (
          await k.query(
            `SELECT 1 FROM jobs WHERE kind = 'repair' AND dataset_id = $1
               AND state IN ('queued', 'running')`,
            [id],
          )
        ).length === 0 || undefined,
      60_000,
      100,
    );
    const all = await k.query<JobRow & { state: string; error: string | null }>(
      `SELECT state, error, total_bytes, agent_id AS "to",
              ARRAY(SELECT jsonb_array_elements_text(payload->'sourceAgents')) AS sources,
              extract(epoch FROM created_at)::float8 AS created,
              extract(epoch FROM updated_at)::float8 AS finished, result
       FROM jobs WHERE kind = 'repair' AND dataset_id = $1`,
      [id],
    );
    const jobs = all.filter((j) => j.state === 'done');
    const long = jobs.filter((j) => (j.result?.bytes ?? 0) >= 4 * MiB);
    expect(long.length).toBeGreaterThan(0);
    for (const j of long) {
      const rate = j.result!.bytes / j.result!.transferSeconds;
      expect(rate).toBeGreaterThan(0.9 * B_DONOR);
      expect(rate).toBeLessThan(1.1 * B_DONOR);
    }
    // Jobs that overlap in time never share a destination or a source: each donor receives at
    // most b and sends at most b.
    for (const [i, x] of jobs.entries()) {
      for (const y of jobs.slice(i + 1)) {
        if (x.finished <= y.created || y.finished <= x.created) continue;
        expect(x.to).not.toBe(y.to);
        expect(x.sources.filter((s) => y.sources.includes(s))).toEqual([]);
      }
    }
    // Overall, as the manager saw it: bytes committed over the time since the first job. Three
    // donors each sending and receiving at b at once: never beyond 3 b. (How close repair gets
    // to its caps is the repair benchmark's figure, not a timed test's: a job's delivery to its
    // agent and the scheduler's passes add wall-clock gaps here.)
    const done = await k.query<{ bytes: string; last: number }>(
      `SELECT sum(bytes) AS bytes, extract(epoch FROM max(done_at))::float8 AS last
       FROM repair_done WHERE dataset_id = $1`,
      [id],
    );
    const bytes = Number(done[0]!.bytes);
    const window = done[0]!.last - Math.min(...all.map((j) => j.created));
    expect(bytes, JSON.stringify(all.map((j) => [j.state, j.error, j.total_bytes]))).toBe(24 * MiB);
    expect(bytes / window).toBeLessThan(1.1 * 3 * B_DONOR);
  }, 240_000);

  it('holds with jobs queued behind one another: a donor receives one job at a time, each at b', async () => {
    // Two datasets raised to n = 2 together: each sender has units of both, one job per dataset;
    // the second is queued behind the first for the same receiver (a repair channel), which
    // runs them one after the other.
    const x = await importDataset('cap/x.bin', 24 * MiB, 61);
    const y = await importDataset('cap/y.bin', 12 * MiB, 62);
    await Promise.all([k.setReplicas(x.id, 2), k.setReplicas(y.id, 2)]);
    await Promise.all([
      k.waitForCopies(x.id, 2, [], 180_000),
      k.waitForCopies(y.id, 2, [], 180_000),
    ]);
    const jobs = await waitFor(
      'the repair jobs to finish',
      async () => {
        const rows = await k.query<{
          state: string;
          to: string;
          sources: string[];
          result: {
            bytes: number;
            transferSeconds: number;
            waitedSeconds: number;
            transferFrom: number;
            transferTo: number;
          } | null;
        }>(
          `SELECT state, agent_id AS "to", result,
                  ARRAY(SELECT jsonb_array_elements_text(payload->'sourceAgents')) AS sources
           FROM jobs WHERE kind = 'repair' AND dataset_id = ANY($1::uuid[])`,
          [[x.id, y.id]],
        );
        return rows.every((r) => r.state === 'done') ? rows : undefined;
      },
      60_000,
      100,
    );
    // Some job waited for its receiver's turn: the channel was used (else this proves nothing).
    expect(jobs.some((j) => (j.result?.waitedSeconds ?? 0) > 0)).toBe(true);
    // Transfers sharing a destination or a source never overlap (1 ms: clock granularity).
    for (const [i, a] of jobs.entries()) {
      for (const b of jobs.slice(i + 1)) {
        const ra = a.result!;
        const rb = b.result!;
        if (ra.transferTo <= rb.transferFrom + 1 || rb.transferTo <= ra.transferFrom + 1) continue;
        expect(a.to).not.toBe(b.to);
        expect(a.sources.filter((s) => b.sources.includes(s))).toEqual([]);
      }
    }
    for (const j of jobs.filter((r) => (r.result?.bytes ?? 0) >= 4 * MiB)) {
      const rate = j.result!.bytes / j.result!.transferSeconds;
      expect(rate).toBeGreaterThan(0.9 * B_DONOR);
      expect(rate).toBeLessThan(1.1 * B_DONOR);
    }
  }, 240_000);

  it('yields to a foreground reader: while clients read from every donor, repair runs far below b', async () => {
    const fg = await importDataset('cap/foreground.bin', 6 * MiB, 71);
    // Three morsels per receiving donor, so a job's rate is not one morsel's: a morsel that
    // slipped through between two foreground reads on a busy machine made a one-morsel job
    // look unyielding (CI, load 10+).
    const r = await importDataset('cap/repaired.bin', 9 * MiB, 72);
    // Clients read the other dataset from all three donors, over and over, for the whole
    // repair: every sender and every receiver of the repair serves a foreground read. Three
    // readers at once, so a donor is quiet only when all three are between reads (a read's
    // map fetch, or an event-loop stall of this process, which also runs the manager).
    let reading = true;
    let reads = 0;
    const reader = async (): Promise<void> => {
      while (reading) {
        await c.get(fg.id);
        reads++;
      }
    };
    const readers = Promise.all([reader(), reader(), reader()]);
    try {
      await waitFor('the first foreground read', async () => reads > 0 || undefined, 60_000);
      await k.setReplicas(r.id, 2);
      await k.waitForCopies(r.id, 2, [], 180_000);
    } finally {
      reading = false;
      await readers;
    }
    const jobs = await k.query<{ result: { bytes: number; transferSeconds: number } | null }>(
      `SELECT result FROM jobs WHERE kind = 'repair' AND dataset_id = $1 AND state = 'done'`,
      [r.id],
    );
    expect(jobs.length).toBeGreaterThan(0);
    for (const j of jobs) {
      // At b a morsel takes 0.5 s; held behind the reader (REPAIR_YIELD_RATE_BPS, b / 32 of the
      // default b, each hold at most REPAIR_YIELD_MAX_HOLD_MS) it takes seconds.
      expect(j.result!.bytes / j.result!.transferSeconds).toBeLessThan(0.5 * B_DONOR);
    }
  }, 240_000);
});
