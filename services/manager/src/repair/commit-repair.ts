import { FreeLoaderError, type Extent, type RepairCommitResponse } from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { reassign } from '../placement/move-extents.js';
import { lockDatasetState } from '../repositories/datasets.js';
import { enqueueJob } from '../repositories/jobs.js';
import { getPlacement, setPlacement } from '../repositories/placement.js';
import { lockAgentRows, releaseCommitted, relocateJobRow } from '../repositories/relocations.js';
import { deleteFaultsOfRuns } from '../repositories/repair-faults.js';
import { commitReservations } from '../repositories/repair-reservations.js';
import {
  finishRepairUnits,
  lockRepairUnits,
  type RepairUnitRow,
} from '../repositories/repair-units.js';
import type { RepairDeps } from './repair-deps.js';

/**
 * The destination stored and verified every morsel of these units: in one transaction, point
 * placement at it (each departing donor's run substituted, each missing run added), move the
 * ledger (its reservations become used space; the replaced donors' committed bytes shrink), drop
 * the units' fault rows, queue a delete of the now-surplus copies for each replaced donor still
 * enrolled (run when it comes back, if it ever does), and take the units off the queue.
 * Idempotent: units already committed count zero.
 */
export async function commitRepairUnits(
  deps: Pick<RepairDeps, 'pg'>,
  jobId: string,
  unitIds: readonly string[],
  agentId: string,
): Promise<RepairCommitResponse> {
  return withTransaction(deps.pg, async (tx) => {
    const job = await relocateJobRow(tx, jobId, false);
    if (!job || job.kind !== 'repair' || job.agent_id !== agentId || !job.dataset_id) {
      throw new FreeLoaderError('JOB_NOT_FOUND', `no repair job ${jobId} for this agent`);
    }
    const datasetId = job.dataset_id;
    if ((await lockDatasetState(tx, datasetId)) !== 'ready') {
      throw new FreeLoaderError('CONFLICT', `dataset ${datasetId} is no longer ready`);
    }
    // Set-based: a constant number of statements per batch (plus one per replaced donor), not
    // about ten per unit; the transaction still applies each unit whole or not at all.
    const units = await lockRepairUnits(tx, [...new Set(unitIds)]);
    for (const unit of units) {
      if (unit.jobId !== jobId || unit.to !== agentId || unit.state !== 'running') {
        throw new FreeLoaderError('CONFLICT', `repair unit ${unit.id} is not this job's`);
      }
    }
    if (units.length === 0) return { units: 0, datasetId, morsels: 0, bytes: 0 };
    const replaced = new Map<string, number>();
    const surplus = new Map<string, number[]>();
    for (const unit of units) {
      if (!unit.from) continue;
      // As a ledger move: the replaced donor gives up what the destination's reservation took.
      if (unit.reservationId) replaced.set(unit.from, (replaced.get(unit.from) ?? 0) + unit.bytes);
      if (unit.reason !== 'leaving' && unit.reason !== 'revoked') {
        surplus.set(unit.from, [...(surplus.get(unit.from) ?? []), ...unit.morsels]);
      }
    }
    // Agent rows locked first, in id order, as reservations and relocations lock them.
    await lockAgentRows(tx, [agentId, ...replaced.keys()]);
    await commitReservations(
      tx,
      agentId,
      units.flatMap((u) => (u.reservationId ? [u.reservationId] : [])),
    );
    for (const [from, bytes] of replaced) await releaseCommitted(tx, datasetId, from, bytes);
    await deleteFaultsOfRuns(tx, datasetId, units);
    await finishRepairUnits(tx, units, agentId);
    await setPlacement(
      tx,
      datasetId,
      units.reduce(
        (extents, unit) => placeUnit(extents, unit, agentId),
        await getPlacement(tx, datasetId),
      ),
    );
    for (const [from, morsels] of surplus) {
      await enqueueJob(tx, {
        kind: 'delete',
        datasetId,
        agentId: from,
        payload: { datasetId, morsels: morsels.sort((a, b) => a - b) },
      });
    }
    return {
      units: units.length,
      datasetId,
      morsels: units.reduce((s, u) => s + u.morsels.length, 0),
      bytes: units.reduce((s, u) => s + u.bytes, 0),
    };
  });
}

/** Placement after one unit: its run moved from the replaced donor, or added as a new run. */
function placeUnit(extents: readonly Extent[], unit: RepairUnitRow, to: string): Extent[] {
  const { copy, first, count } = unit;
  return unit.from
    ? reassign(extents, unit.from, [{ copy, first, count, to }])
    : reassign([...extents, { copy, first, count, unit: 1, phase: 0, donors: [to] }], '', []);
}
