import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FreeLoaderError, type Extent } from '@freeloader/protocol';
import { getPlacement, setPlacement } from '../repositories/placement.js';
import { failureMarks } from '../repositories/failure-marks.js';
import { repairUnits, syncWaitingUnits } from '../repositories/repair-units.js';
import type { RepairableDataset } from '../repositories/repairable-datasets.js';
import { startHarness, type Harness } from '../test/harness.js';
import { commitRepairUnits } from './commit-repair.js';
import { dispatchRepairs } from './dispatch.js';

// Dispatch and commit of repair units on a real PostgreSQL: space is reserved once per job, and
// a batched commit applies each unit whole, once (a resumed job's repeated commit counts zero).
const MORSEL = 1024;
/** Morsels per unit, units per dataset. */
const PER_UNIT = 2;
const UNITS = 2;
const SIZE = MORSEL * PER_UNIT * UNITS;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({}, {});
}, 60_000);

afterAll(() => h?.close());

const q = async <R extends Record<string, unknown>>(sql: string, params: unknown[] = []) =>
  (await h.app.pg.query<R>(sql, params)).rows;

/**
 * A ready dataset, copy 0 on `lost` (its donor died, counted lost, holding the dataset's
 * committed space), copy 1 on `source`, `to` free: dispatched, one job for `to` with every unit.
 */
async function dispatchedRepair(name: string) {
  const [lost, source] = [await h.enroll(), await h.enroll()];
  await h.enroll(); // a free destination (earlier tests' donors may be picked too)
  const ds = await h.app.namespaceRepo.createDataset({
    path: `repair-commit/${name}.bin`,
    sizeBytes: SIZE,
    morselSize: MORSEL,
    sourceUri: `https://example.org/${name}.bin`,
    state: 'ready',
  });
  const count = PER_UNIT * UNITS;
  const run = (copy: number, donor: string): Extent => ({
    copy,
    first: 0,
    count,
    unit: 1,
    phase: 0,
    donors: [donor],
  });
  await setPlacement(h.app.pg, ds.id, [run(0, lost.agentId), run(1, source.agentId)]);
  await q(
    `INSERT INTO reservations (agent_id, dataset_id, bytes, state, expires_at)
     VALUES ($1, $2, $3, 'committed', now())`,
    [lost.agentId, ds.id, SIZE],
  );
  await q('UPDATE agents SET used_bytes = $2, lost_at = now() WHERE id = $1', [lost.agentId, SIZE]);
  await q(
    `INSERT INTO morsel_faults (dataset_id, copy, morsel, agent_id, reason, reported_by)
     VALUES ($1, 0, 1, $2, 'missing', 'scrub')`,
    [ds.id, lost.agentId],
  );
  await syncWaitingUnits(
    h.app.pg,
    Array.from({ length: UNITS }, (_, i) => ({
      datasetId: ds.id,
      copy: 0,
      first: i * PER_UNIT,
      count: PER_UNIT,
      from: lost.agentId,
      reason: 'lost' as const,
      morsels: Array.from({ length: PER_UNIT }, (_, k) => i * PER_UNIT + k),
      bytes: PER_UNIT * MORSEL,
      liveCopies: 1,
    })),
  );
  const mine = async () => (await repairUnits(h.app.pg)).filter((u) => u.datasetId === ds.id);
  const dataset: RepairableDataset = {
    id: ds.id,
    sizeBytes: SIZE,
    cachedBytes: SIZE,
    morselSize: MORSEL,
    replicas: 2,
    sourceUri: `https://example.org/${name}.bin`,
    etag: null,
    lastModified: null,
  };
  const dispatched = await dispatchRepairs(h.app, await mine(), {
    marks: await failureMarks(h.app.pg),
    departing: new Map([[lost.agentId, 'lost' as const]]),
    readable: (id) => id !== lost.agentId,
    datasets: new Map([[ds.id, dataset]]),
  });
  expect(dispatched).toBe(UNITS);
  const units = await mine();
  const jobId = units[0]!.jobId!;
  const to = { agentId: units[0]!.to! };
  return { ds, lost, source, to, units, jobId };
}

describe('dispatch', () => {
  it('reserves the destination once per job: every unit its own reservation, one statement', async () => {
    const { ds, to, units, jobId } = await dispatchedRepair('reserve');
    expect(units.every((u) => u.state === 'running' && u.jobId === jobId)).toBe(true);
    expect(units.every((u) => u.to === to.agentId)).toBe(true);
    const held = await q<{ id: string; bytes: string; created_at: Date }>(
      `SELECT id, bytes, created_at FROM reservations
       WHERE agent_id = $1 AND dataset_id = $2 AND state = 'active'`,
      [to.agentId, ds.id],
    );
    expect(held.map((r) => r.id).sort()).toEqual(units.map((u) => u.reservationId).sort());
    expect(held.every((r) => Number(r.bytes) === PER_UNIT * MORSEL)).toBe(true);
    // One transaction made them all (and the job): one now().
    expect(new Set(held.map((r) => r.created_at.getTime())).size).toBe(1);
  });
});

describe('batched commit', () => {
  it('applies every unit of the batch: placement, ledger, faults, queue, log, delete job', async () => {
    const { ds, lost, to, units, jobId } = await dispatchedRepair('batch');
    const done = await commitRepairUnits(
      h.app,
      jobId,
      units.map((u) => u.id),
      to.agentId,
    );
    expect(done).toMatchObject({ units: UNITS, morsels: UNITS * PER_UNIT, bytes: SIZE });
    const copy0 = (await getPlacement(h.app.pg, ds.id)).filter((e) => e.copy === 0);
    expect(copy0.flatMap((e) => e.donors)).toEqual([to.agentId]);
    expect(copy0.reduce((s, e) => s + e.count, 0)).toBe(UNITS * PER_UNIT);
    const [agents] = [
      await q<{ id: string; used_bytes: string }>(
        'SELECT id, used_bytes FROM agents WHERE id = ANY($1::uuid[])',
        [[lost.agentId, to.agentId]],
      ),
    ];
    const used = new Map(agents.map((a) => [a.id, Number(a.used_bytes)]));
    expect(used.get(to.agentId)).toBe(SIZE);
    expect(used.get(lost.agentId)).toBe(0);
    const states = await q<{ state: string }>(
      'SELECT state FROM reservations WHERE agent_id = $1 AND dataset_id = $2',
      [to.agentId, ds.id],
    );
    expect(states.map((r) => r.state)).toEqual(['committed', 'committed']);
    expect(await q('SELECT 1 FROM morsel_faults WHERE dataset_id = $1', [ds.id])).toHaveLength(0);
    expect(await q('SELECT 1 FROM repair_units WHERE dataset_id = $1', [ds.id])).toHaveLength(0);
    const log = await q<{ bytes: string }>('SELECT bytes FROM repair_done WHERE dataset_id = $1', [
      ds.id,
    ]);
    expect(log.map((r) => Number(r.bytes))).toEqual([PER_UNIT * MORSEL, PER_UNIT * MORSEL]);
    const deletes = await q<{ payload: { morsels: number[] } }>(
      `SELECT payload FROM jobs WHERE kind = 'delete' AND agent_id = $1 AND dataset_id = $2`,
      [lost.agentId, ds.id],
    );
    expect(deletes.map((d) => d.payload.morsels)).toEqual([[0, 1, 2, 3]]);
  });

  it('is all or nothing: a unit that is not the job’s fails the batch and changes nothing', async () => {
    const a = await dispatchedRepair('atomic-a');
    const b = await dispatchedRepair('atomic-b');
    const before = await getPlacement(h.app.pg, a.ds.id);
    const err = await commitRepairUnits(
      h.app,
      a.jobId,
      [a.units[0]!.id, b.units[0]!.id],
      a.to.agentId,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FreeLoaderError);
    expect((err as FreeLoaderError).code).toBe('CONFLICT');
    expect(await getPlacement(h.app.pg, a.ds.id)).toEqual(before);
    const left = await q<{ state: string }>(
      'SELECT state FROM repair_units WHERE dataset_id = $1',
      [a.ds.id],
    );
    expect(left.map((u) => u.state)).toEqual(['running', 'running']);
    const reservations = await q<{ state: string }>(
      'SELECT state FROM reservations WHERE agent_id = $1 AND dataset_id = $2',
      [a.to.agentId, a.ds.id],
    );
    expect(reservations.every((r) => r.state === 'active')).toBe(true);
  });

  it('resumes after a crash mid-job: the repeated batch commits only what was not committed', async () => {
    const { ds, to, units, jobId } = await dispatchedRepair('resume');
    const [first, second] = units;
    // The agent committed the first batch, crashed, and its resumed job sends every unit again.
    expect(await commitRepairUnits(h.app, jobId, [first!.id], to.agentId)).toMatchObject({
      units: 1,
    });
    const again = await commitRepairUnits(h.app, jobId, [first!.id, second!.id], to.agentId);
    expect(again).toMatchObject({ units: 1, bytes: PER_UNIT * MORSEL });
    expect(
      await commitRepairUnits(h.app, jobId, [first!.id, second!.id], to.agentId),
    ).toMatchObject({ units: 0, bytes: 0 });
    const [row] = await q<{ used_bytes: string }>('SELECT used_bytes FROM agents WHERE id = $1', [
      to.agentId,
    ]);
    expect(Number(row!.used_bytes)).toBe(SIZE);
    const log = await q('SELECT 1 FROM repair_done WHERE dataset_id = $1', [ds.id]);
    expect(log).toHaveLength(UNITS);
  });
});
