import { FreeLoaderError, type Extent, type RepairCommitResponse } from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { reassign } from '../placement/move-extents.js';
import { lockDatasetState } from '../repositories/datasets.js';
import { enqueueJob } from '../repositories/jobs.js';
import { getPlacement, setPlacement } from '../repositories/placement.js';
import { moveLedger, relocateJobRow } from '../repositories/relocations.js';
import {
  commitReservationOf,
  deleteFaults,
  finishRepairUnit,
  lockRepairUnit,
  type RepairUnitRow,
} from '../repositories/repairs.js';
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
    const units: RepairUnitRow[] = [];
    for (const id of [...new Set(unitIds)].sort()) {
      const unit = await lockRepairUnit(tx, id);
      if (!unit) continue;
      if (unit.jobId !== jobId || unit.to !== agentId || unit.state !== 'running') {
        throw new FreeLoaderError('CONFLICT', `repair unit ${id} is not this job's`);
      }
      units.push(unit);
    }
    let extents = await getPlacement(tx, datasetId);
    const surplus = new Map<string, number[]>();
    for (const unit of units) {
      extents = placeUnit(extents, unit, agentId);
      if (unit.from) {
        await moveLedger(tx, datasetId, {
          from: unit.from,
          reservations: unit.reservationId ? { [agentId]: unit.reservationId } : {},
          bytesPerTarget: { [agentId]: unit.bytes },
        });
        if (unit.reason !== 'leaving' && unit.reason !== 'revoked') {
          surplus.set(unit.from, [...(surplus.get(unit.from) ?? []), ...unit.morsels]);
        }
      } else if (unit.reservationId) {
        await commitReservationOf(tx, unit.reservationId, agentId);
      }
      await deleteFaults(tx, datasetId, unit.copy, unit.morsels);
      await finishRepairUnit(tx, unit, agentId);
    }
    if (units.length > 0) await setPlacement(tx, datasetId, extents);
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
