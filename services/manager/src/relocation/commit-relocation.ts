import {
  FreeLoaderError,
  type RelocateJobPayload,
  type RelocationCommitResponse,
} from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { reassign } from '../placement/move-extents.js';
import { lockDatasetState } from '../repositories/datasets.js';
import { getPlacement, setPlacement } from '../repositories/placement.js';
import { moveLedger, relocateJobRow, setJobResult } from '../repositories/relocations.js';
import type { RelocateCommitInfo } from './change-quota.js';
import type { RelocationDeps } from './relocation-deps.js';

type Payload = RelocateCommitInfo & RelocateJobPayload;
type Result = RelocationCommitResponse & { committed?: boolean };

/**
 * The agent pushed every morsel of a relocate job: in one transaction, point placement at the
 * targets (splitting extents where only part moved), turn the targets' reservations into used
 * space and take the same bytes off the old donor's ledger. Idempotent: a retried commit
 * answers the first one's result.
 */
export async function commitRelocation(
  deps: RelocationDeps,
  jobId: string,
  agentId: string,
): Promise<RelocationCommitResponse> {
  const done = await withTransaction(deps.pg, async (tx) => {
    const job = await relocateJobRow<Payload, Result>(tx, jobId, true);
    if (!job || job.kind !== 'relocate' || job.agent_id !== agentId || !job.dataset_id) {
      throw new FreeLoaderError('JOB_NOT_FOUND', `no relocate job ${jobId} for this agent`);
    }
    if (job.result?.committed) return job.result;
    if (job.state !== 'running') {
      throw new FreeLoaderError('CONFLICT', `relocate job ${jobId} is ${job.state}`);
    }
    const datasetId = job.dataset_id;
    if ((await lockDatasetState(tx, datasetId)) !== 'ready') {
      throw new FreeLoaderError('CONFLICT', `dataset ${datasetId} is no longer ready`);
    }
    const p = job.payload;
    await setPlacement(
      tx,
      datasetId,
      reassign(await getPlacement(tx, datasetId), p.from, p.chunks),
    );
    const movedBytes = await moveLedger(tx, datasetId, p);
    const result: RelocationCommitResponse = {
      datasetId,
      movedMorsels: Math.round(movedBytes / p.morselSize),
      movedBytes,
    };
    await setJobResult(tx, jobId, { ...result, committed: true });
    return result;
  });
  const { committed: _, ...answer } = done as RelocationCommitResponse & { committed?: boolean };
  return answer;
}

/** Give back a failed relocation's target reservations (nothing was committed). */
export async function abortRelocation(
  deps: RelocationDeps,
  jobId: string,
  agentId: string,
): Promise<void> {
  const job = await relocateJobRow<Payload, Result>(deps.pg, jobId, false);
  if (!job || job.kind !== 'relocate' || job.agent_id !== agentId) {
    throw new FreeLoaderError('JOB_NOT_FOUND', `no relocate job ${jobId} for this agent`);
  }
  if (job.result?.committed) return;
  for (const id of Object.values(job.payload.reservations ?? {})) {
    await deps.reservationsRepo.release(id).catch(() => undefined);
  }
}
