import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB, type EvictionLogEntry } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { watermarkSweep } from '../prefix/eviction.js';
import { startHarness, type Harness } from '../test/harness.js';

// Real PostgreSQL and a real HTTP source: a full cache, then an import that needs room, then
// the watermark sweep; the log must say what was cut, why, and for which import.
let h: Harness;
let src: TestServer;
let alice: { authorization: string; userId: string };
/** The log names datasets alice may not read (they have no owner): an admin reads it all. */
let admin: { authorization: string; userId: string };
const donors: string[] = [];
const auths = new Map<string, string>();
let deleter: NodeJS.Timeout | undefined;
let pass: Promise<void> | null = null;

/** Run the donors' delete jobs through the real job API, as their agents would. */
function runDeletes(): void {
  deleter = setInterval(() => {
    if (pass) return;
    pass = (async () => {
      for (const agentId of donors) {
        for (const job of await h.app.jobsRepo.claim(agentId, { max: 10, kinds: ['delete'] })) {
          await h.call({
            method: 'POST',
            url: `/api/v1/jobs/${job.id}/finish`,
            headers: { authorization: auths.get(agentId)! },
            payload: { state: 'done' },
          });
        }
      }
    })().finally(() => (pass = null));
  }, 50);
}

beforeAll(async () => {
  // Liveness must outlast a slow machine: nothing heartbeats in this file.
  h = await startHarness({ staleAfterMs: 600_000, deadAfterMs: 1_200_000 });
  src = await startTestServer({ size: 8 * MiB });
  alice = await h.login('scientist');
  admin = await h.login('admin');
  for (const name of ['e1', 'e2']) {
    const agent = await h.enroll({ name, quotaBytes: 8 * MiB });
    donors.push(agent.agentId);
    auths.set(agent.agentId, agent.auth);
  }
  runDeletes();
});
afterAll(async () => {
  clearInterval(deleter);
  await pass;
  await h?.close();
  await src?.close();
});

/** A ready dataset of `mib` MiB, all cached, striped over both donors with committed space. */
async function cachedDataset(path: string, mib: number): Promise<string> {
  const d = await h.app.namespaceRepo.createDataset({
    path,
    sourceUri: `${src.url}?${path}`,
    sizeBytes: mib * MiB,
    state: 'ready',
  });
  await h.app.pg.query(
    `UPDATE datasets SET cached_bytes = size_bytes, last_access_at = now() - interval '1 hour'
     WHERE id = $1`,
    [d.id],
  );
  await h.app.placementRepo.setPlacement(d.id, [
    { copy: 0, first: 0, count: mib, unit: 1, phase: 0, donors },
  ]);
  for (const agentId of donors) {
    const r = await h.app.reservationsRepo.reserve({
      agentId,
      bytes: (mib / 2) * MiB,
      datasetId: d.id,
    });
    await h.app.reservationsRepo.commit(r.id);
  }
  return d.id;
}

const log = async (who = admin): Promise<EvictionLogEntry[]> => {
  const res = await h.call({ method: 'GET', url: '/api/v1/cache/evictions', headers: who });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe('eviction log', () => {
  it('records which import a cut made room for, and who started it', async () => {
    const old = await cachedDataset('log/old.bin', 14);
    const res = await h.call({
      method: 'POST',
      url: '/api/v1/datasets',
      headers: alice,
      payload: { uri: src.url, name: 'incoming/new.bin' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json().dataset.id as string;
    const entries = await log();
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) {
      expect(e).toMatchObject({
        datasetId: old,
        datasetPath: 'log/old.bin',
        reason: 'import',
        forPath: 'incoming/new.bin',
        forDatasetId: created,
        forUserId: alice.userId,
        forUserName: expect.stringMatching(/^scientist-/),
      });
      expect(['trim', 'evict']).toContain(e.kind);
    }
    // Alice's import cut a dataset she may not read: its cut is not hers to see.
    expect(await log(alice)).toEqual([]);
  });

  it('records the watermark sweep as its own reason, newest first', async () => {
    const before = (await log()).length;
    // Over 90 % of the 16 MiB donated: the sweep trims back under 75 %.
    await h.app.pg.query(`DELETE FROM datasets`);
    await h.app.pg.query(`UPDATE reservations SET state = 'released'`);
    await h.app.pg.query(`UPDATE agents SET used_bytes = 0`);
    await cachedDataset('log/full.bin', 16);
    const cuts = await watermarkSweep(h.app);
    expect(cuts.length).toBeGreaterThan(0);
    const entries = await log();
    expect(entries.length).toBe(before + cuts.length);
    expect(entries[0]).toMatchObject({
      datasetPath: 'log/full.bin',
      reason: 'watermark',
      forPath: null,
      forUserId: null,
    });
    // Earlier entries keep the path of a dataset that is gone now.
    expect(entries.at(-1)!.datasetPath).toBe('log/old.bin');
  });

  it('needs a session', async () => {
    expect((await h.call({ method: 'GET', url: '/api/v1/cache/evictions' })).statusCode).toBe(401);
  });
});
