import { readFile, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { morselsOfDonor, MiB, type DatasetMap, type FaultReportResult } from '@freeloader/protocol';
import { morselPath } from '@freeloader/protocol/wire';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { internalsOf, spawnAgent, waitFor, waitForAgentState } from '../test/cluster-harness.js';
import { flipByte } from '../test/damage.js';
import {
  rejectsWith,
  sha256Hex,
  startDataCluster,
  type DataCluster,
} from '../test/data-cluster.js';

// Integrity over time (issue 15 item 4) with real agents, a real manager on PostgreSQL and real
// files: the scrub finds a flipped byte, the start-up check finds a deleted or truncated data
// file, a client reports a bad hash; each becomes a morsel_faults row, the map marks the copy
// unusable, and `get` stays byte-identical without reading it.
//
// Donors 1 and 2 scrub at 8 MiB/s (a few passes a second over these small datasets); donor 3
// at 1 KiB/s, which checks one morsel and then waits ~17 minutes: its copies stay unscrubbed
// for the whole run, so the client's report is the one that finds its bad copy.
let c: DataCluster;
const servers: TestServer[] = [];

beforeAll(async () => {
  c = await startDataCluster(3, '64MiB', {
    agentArgs: (i) => ['--scrub-rate', i < 2 ? '8MiB' : '1KiB'],
  });
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await c?.close();
});

async function importDataset(
  name: string,
  size: number,
  seed: number,
  replicas?: number,
): Promise<{ src: TestServer; id: string }> {
  await Promise.all(c.agents.map((a) => waitForAgentState(c.tm, a.agentId, 'live')));
  const src = await startTestServer({ size, seed });
  servers.push(src);
  // Round-robin: every donor holds its third of the morsels. The default (predictive once the
  // manager has delivery rates) gives a donor measured slow on a loaded machine one morsel or
  // none, and these tests need copies on each (CI failed on that once).
  const d = await c.importAndWait({
    uri: src.url,
    name,
    width: 3,
    replicas,
    policy: 'round-robin',
  });
  expect(d.state).toBe('ready');
  return { src, id: d.id };
}

const mapOf = (id: string): Promise<DatasetMap> =>
  c.tm.admin.request<DatasetMap>('GET', `/datasets/${id}/map`);

/** The morsels placement gives donor `i`, ascending: their slots in its data file, in order. */
async function heldBy(id: string, i: number): Promise<number[]> {
  const map = await mapOf(id);
  const agentId = c.agents[i]!.agentId;
  return [...new Set(map.extents.flatMap((e) => morselsOfDonor(e, agentId)))].sort((a, b) => a - b);
}

const dataFile = (i: number, id: string): string =>
  join(c.agentDirs[i]!, 'store', 'datasets', `${id}.data`);

interface FaultRowView {
  morsel: number;
  agent_id: string;
  reason: string;
  reported_by: string;
}

/** The dataset's fault rows; `withTime` adds reported_at (a report refreshes it). */
async function faultRows(id: string, withTime = false): Promise<FaultRowView[]> {
  const time = withTime ? ', reported_at' : '';
  const { rows } = await internalsOf(c.tm.manager).pg.query<FaultRowView>(
    `SELECT morsel, agent_id, reason, reported_by${time} FROM morsel_faults
     WHERE dataset_id = $1 ORDER BY morsel`,
    [id],
  );
  return rows;
}

/** Wait until the map marks exactly these copies (`morsel` on donor `i`) bad. */
async function waitForBadCopies(id: string, i: number, morsels: number[]): Promise<DatasetMap> {
  const donor = c.agents[i]!.agentId;
  const want = morsels.map((morsel) => ({ morsel, donor }));
  return waitFor(
    `the map of ${id} to mark ${JSON.stringify(morsels)} on donor ${i + 1} bad`,
    async () => {
      const map = await mapOf(id);
      const bad = (map.badCopies ?? []).filter((b) => b.donor === donor);
      return JSON.stringify(bad) === JSON.stringify(want) ? map : undefined;
    },
    60_000,
    200,
  );
}

/**
 * `get` of the whole dataset is byte-identical and never asks a donor for a copy marked bad: had
 * it read one, the client would have reported its bad hash before returning (a new row, or a
 * refreshed reporter and time). Donor failure counts are not asserted: on a loaded machine a
 * stalled donor counts as one too.
 */
async function expectCleanGet(id: string, src: TestServer): Promise<void> {
  const before = await faultRows(id, true);
  const out = await c.get(id);
  expect(out.sha256).toBe(sha256Hex(src.content));
  expect(await faultRows(id, true)).toEqual(before);
}

describe('scrub', () => {
  it('finds a flipped byte in a donor data file: fault row, copy unusable, get still byte-identical', async () => {
    const { src, id } = await importDataset('integrity/scrub.bin', 9 * MiB, 41);
    const held = await heldBy(id, 0);
    const victim = held[1]!;
    // Slots follow the planned (index) order: the victim is in slot 1.
    await flipByte(dataFile(0, id), 1 * MiB + 12_345);
    await waitForBadCopies(id, 0, [victim]);
    expect(await faultRows(id)).toEqual([
      {
        morsel: victim,
        agent_id: c.agents[0]!.agentId,
        reason: 'corrupt',
        reported_by: 'scrub',
      },
    ]);
    await expectCleanGet(id, src);
  }, 120_000);
});

describe('start-up check', () => {
  it.each([
    ['deleted', (path: string) => rm(path)],
    ['truncated', (path: string) => truncate(path, 1 * MiB + 10)],
  ])(
    'a data file %s while the donor was down: reported at start-up, not served',
    async (how, damage) => {
      const seed = how === 'deleted' ? 42 : 43;
      const { src, id } = await importDataset(`integrity/startup-${how}.bin`, 9 * MiB, seed);
      const held = await heldBy(id, 1);
      const lost = how === 'deleted' ? held : held.slice(1);
      const donor = c.agents[1]!;
      await donor.stop();
      await damage(dataFile(1, id));
      c.agents[1] = await spawnAgent({
        managerUrl: c.tm.url,
        dir: c.agentDirs[1]!,
        extraArgs: ['--scrub-rate', '8MiB'],
      });
      await waitForAgentState(c.tm, c.agents[1].agentId, 'live');
      const map = await waitForBadCopies(id, 1, lost);
      const rows = await faultRows(id);
      expect(rows.map((r) => [r.morsel, r.reason, r.reported_by])).toEqual(
        lost.map((m) => [m, 'missing', 'startup']),
      );
      // Not advertised: the donor answers MORSEL_NOT_FOUND rather than an empty morsel.
      const url = map.donors.find((d) => d.id === c.agents[1]!.agentId)!.url;
      const res = await fetch(`${url}${morselPath(id, lost[0]!)}`, {
        headers: { authorization: `Bearer ${map.capability}` },
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
        'MORSEL_NOT_FOUND',
      );
      // Nothing left pending: every fault reached the manager.
      const pending = join(c.agentDirs[1]!, 'faults-pending.json');
      await waitFor(
        'no pending faults',
        async () => ((await readFile(pending, 'utf8')) === '[]' ? true : undefined),
        30_000,
      );
      await expectCleanGet(id, src);
    },
    120_000,
  );
});

describe('client bad-hash reports', () => {
  it('a get that reads a bad hash reports it: fault row by the client, the next get skips that copy', async () => {
    // One copy: the get has to read donor 3's bad one (with two, it may take the good twin and
    // never see the bad hash); the next get then takes that morsel from the source.
    const { src, id } = await importDataset('integrity/client.bin', 9 * MiB, 44, 1);
    const held = await heldBy(id, 2);
    // Donor 3's scrub checks at most one morsel per ~17 minutes, the first it holds: not this one.
    // The last it holds (round-robin gives it 3).
    expect(held.length).toBe(3);
    const slot = held.length - 1;
    const victim = held[slot]!;
    await flipByte(dataFile(2, id), slot * MiB + 7);
    // A get on a busy machine may hedge that morsel to the source before donor 3 answers, and so
    // never see the bad copy: read until one get does (each byte-identical all the same).
    await waitFor(
      'a get to read the bad copy',
      async () => {
        const got = await c.get(id);
        expect(got.sha256).toBe(sha256Hex(src.content));
        return got.donorFailures >= 1 ? true : undefined;
      },
      90_000,
    );
    await waitForBadCopies(id, 2, [victim]);
    expect((await faultRows(id)).map((r) => [r.morsel, r.agent_id, r.reported_by])).toEqual([
      [victim, c.agents[2]!.agentId, 'client'],
    ]);
    await expectCleanGet(id, src);
  }, 180_000);

  it('a report naming a donor that holds no copy of that morsel is refused, and records nothing', async () => {
    const { id } = await importDataset('integrity/bogus.bin', 6 * MiB, 45);
    // A morsel donor 0 holds and donor 1 does not (with two copies its twin may be on either).
    const onTwo = new Set(await heldBy(id, 1));
    const onOne = (await heldBy(id, 0)).find((m) => !onTwo.has(m))!;
    expect(onOne).toBeDefined();
    const err = await rejectsWith(
      c.tm.admin.request('POST', `/datasets/${id}/faults`, {
        faults: [{ morsel: onOne, donor: c.agents[1]!.agentId }],
      }),
      'FORBIDDEN',
    );
    expect(err.message).toMatch(/holds no copy/);
    expect(await faultRows(id)).toEqual([]);
    // The right donor is accepted.
    const ok = await c.tm.admin.request<FaultReportResult>('POST', `/datasets/${id}/faults`, {
      faults: [{ morsel: onOne, donor: c.agents[0]!.agentId }],
    });
    expect(ok).toEqual({ recorded: 1, ignored: 0 });
    expect((await faultRows(id)).map((r) => r.reported_by)).toEqual(['client']);
  }, 120_000);
});
