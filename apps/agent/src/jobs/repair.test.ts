import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB, type AgentView } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { runCli, spawnAgent, waitFor } from '../test/cluster-harness.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { repairKit, type RepairKit } from '../test/repair-kit.js';

// Repair against real agent processes and a real manager (issue 15): failure classes, the
// repair queue, repair jobs donor-to-donor (or from the source), reintegration and leaving.
// The tests run in order on one cluster of five donors; each says what it leaves behind.
// Thresholds are short: stale 5 s, dead 10 s, lost (REPAIR_AFTER_MS) 12 s.
const REPAIR_AFTER_MS = 12_000;
let c: DataCluster;
let k: RepairKit;
const servers: TestServer[] = [];
/** The 12 MiB n=2 dataset the first test makes and the later ones read. */
let shared: { id: string; content: Buffer };

beforeAll(async () => {
  c = await startDataCluster(5, '64MiB', {
    manager: { repairAfterMs: REPAIR_AFTER_MS, repairTickMs: 300 },
  });
  k = repairKit(c.tm);
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await c?.close();
});

/** Import one copy (imports place REPLICAS_DEFAULT otherwise): what repair tops up or replaces. */
async function importDataset(name: string, size: number, seed: number, width: number) {
  const src = await startTestServer({ size, seed });
  servers.push(src);
  const d = await c.importAndWait({ uri: src.url, name, width, replicas: 1 });
  expect(d.state).toBe('ready');
  return { src, id: d.id };
}

const agentNamed = (id: string) => c.agents.find((a) => a.agentId === id)!;
const view = async (id: string): Promise<AgentView> =>
  (await c.tm.agents()).find((a) => a.id === id)!;
const repairJobs = async () =>
  Number(
    (await k.query<{ n: string }>(`SELECT count(*) AS n FROM jobs WHERE kind = 'repair'`))[0]!.n,
  );

describe('repair after a donor is lost', () => {
  it('heals n=2 donor-to-donor, repairs a kill -9 past REPAIR_AFTER_MS, survives the source stopping and a second kill, and frees the surplus of a donor that returns', async () => {
    const { src, id } = await importDataset('rep/kill.bin', 12 * MiB, 41, 4);
    shared = { id, content: src.content };
    // Under-replicated (one copy, two wanted): the missing copy is made from the live one.
    const sourceRequests = src.requests;
    await k.setReplicas(id, 2);
    await k.waitForCopies(id, 2);
    expect(src.requests).toBe(sourceRequests);

    const first = agentNamed((await k.copies(id))[0]![0]!);
    await first.stop('SIGKILL');
    await k.waitForClass(first.agentId, 'offline');
    await k.waitForClass(first.agentId, 'lost', 60_000);
    await k.waitForCopies(id, 2, [first.agentId]);
    expect((await view(first.agentId)).usedBytes).toBe(0);

    // The durable copy gone and another donor dead: the two copies still serve every byte.
    await src.close();
    const second = agentNamed((await k.copies(id))[1]![0]!);
    await second.stop('SIGKILL');
    const out = await c.get(id);
    expect(out.sha256).toBe(sha256Hex(src.content));

    // The first donor comes back after its copies were re-created: they are surplus now.
    const i = c.agents.indexOf(first);
    c.agents[i] = await spawnAgent({
      managerUrl: c.tm.url,
      dir: c.agentDirs[i]!,
      name: `donor-${i + 1}`,
    });
    await k.waitForClass(first.agentId, 'online');
    await waitFor(
      'the returning donor to hold nothing',
      async () => {
        const v = await view(first.agentId);
        return v.usedBytes === 0 && v.freeBytes === v.quotaBytes ? v : undefined;
      },
      60_000,
      200,
    );
    // The second donor is lost in turn and repaired around too.
    await k.waitForClass(second.agentId, 'lost', 60_000);
    await k.waitForCopies(id, 2, [second.agentId]);
    expect((await c.get(id)).sha256).toBe(sha256Hex(src.content));
  }, 300_000);
});

describe('a copy known bad (morsel_faults)', () => {
  it('is re-created elsewhere from the source when it was the only copy, and its row goes', async () => {
    const { src, id } = await importDataset('rep/fault.bin', 6 * MiB, 42, 3);
    const before = await k.copies(id);
    const bad = before[2]![0]!;
    await k.query(
      `INSERT INTO morsel_faults (dataset_id, copy, morsel, agent_id, reason, reported_by)
       VALUES ($1, 0, 2, $2, 'corrupt', 'client')`,
      [id, bad],
    );
    await waitFor(
      'the fault to be repaired',
      async () => {
        const rows = await k.query('SELECT 1 FROM morsel_faults WHERE dataset_id = $1', [id]);
        const now = await k.copies(id);
        return rows.length === 0 && now[2]![0] !== bad ? now : undefined;
      },
      60_000,
      200,
    );
    const after = await k.copies(id);
    expect(after.filter((_, m) => m !== 2)).toEqual(before.filter((_, m) => m !== 2));
    // The bad copy is surplus on its donor: a delete of just that morsel ran there.
    await waitFor(
      'the surplus delete to run',
      async () =>
        (
          await k.query(
            `SELECT 1 FROM jobs WHERE kind = 'delete' AND agent_id = $1 AND dataset_id = $2
               AND state = 'done' AND payload->'morsels' = '[2]'::jsonb`,
            [bad, id],
          )
        ).length > 0 || undefined,
      60_000,
      200,
    );
    expect((await c.get(id)).sha256).toBe(sha256Hex(src.content));
  }, 120_000);
});

describe('a transient outage shorter than REPAIR_AFTER_MS', () => {
  it('makes the donor offline, repairs nothing, and reintegrates it', async () => {
    const copies = await k.copies(shared.id);
    const paused = agentNamed(copies[0]![0]!);
    const jobs = await repairJobs();
    const stoppedAt = performance.now();
    paused.child.kill('SIGSTOP');
    try {
      await k.waitForClass(paused.agentId, 'offline');
    } finally {
      paused.child.kill('SIGCONT');
    }
    expect(performance.now() - stoppedAt).toBeLessThan(REPAIR_AFTER_MS);
    await k.waitForClass(paused.agentId, 'online');
    expect(
      await k.query('SELECT 1 FROM repair_units WHERE from_agent = $1', [paused.agentId]),
    ).toEqual([]);
    expect(await repairJobs()).toBe(jobs);
    expect(await k.copies(shared.id)).toEqual(copies);
    await waitFor(
      'the outage to be recorded',
      async () =>
        (await k.query('SELECT 1 FROM donor_outages WHERE agent_id = $1', [paused.agentId]))
          .length > 0 || undefined,
      30_000,
      200,
    );
  }, 120_000);
});

describe('leaving gracefully', () => {
  it('agent --leave moves every copy elsewhere before the donor is released', async () => {
    const copies = await k.copies(shared.id);
    const leaver = agentNamed(copies[0]![0]!);
    const i = c.agents.indexOf(leaver);
    await leaver.stop('SIGTERM');
    const res = await runCli(
      [
        'agent',
        '--manager',
        c.tm.url,
        '--dir',
        c.agentDirs[i]!,
        '--listen',
        '127.0.0.1:0',
        '--no-settings',
        '--leave',
      ],
      { LOG_LEVEL: 'warn' },
      180_000,
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/leaving: \d+ morsels/);
    expect(res.stderr).toContain('left: every copy lives elsewhere');
    expect((await view(leaver.agentId)).state).toBe('revoked');
    expect((await view(leaver.agentId)).usedBytes).toBe(0);
    await k.waitForCopies(shared.id, 2, [leaver.agentId], 5_000);
    // The source of this dataset is stopped: the copies alone serve it.
    expect((await c.get(shared.id)).sha256).toBe(sha256Hex(shared.content));
  }, 240_000);
});

describe('an admin revoking a donor', () => {
  it('starts repair at once', async () => {
    const copies = await k.copies(shared.id);
    const revoked = copies[0]![0]!;
    await c.tm.admin.request('DELETE', `/agents/${revoked}`);
    await k.waitForCopies(shared.id, 2, [revoked], 60_000);
    expect((await c.get(shared.id)).sha256).toBe(sha256Hex(shared.content));
  }, 120_000);
});
