import type pg from 'pg';
import { FreeLoaderError, type JobView } from '@freeloader/protocol';
import { withTransaction, type Queryable } from './db/pool.js';
import type { EventBus } from './events.js';
import { completeImport, failImport, type ImportOutcomeDeps } from './imports/import-outcome.js';
import { replaceFullDonor, type DiskFullDeps } from './imports/disk-full.js';
import { cancelQueuedJobs } from './repositories/dataset-jobs.js';
import { deleteDatasetRow, lockDatasetState, markDeleting } from './repositories/datasets.js';
import { unrevokedAgents } from './repositories/donor-rows.js';
import { enqueueJob } from './repositories/jobs.js';
import { donorsOfDataset } from './repositories/placement.js';
import type { ReservationsRepo } from './repositories/reservations.js';
import { abandonExtensionIn } from './prefix/abandon-extension.js';
import type { ExtensionSettleDeps } from './prefix/deps.js';
import { isExtensionJob, onExtensionJobFinished } from './prefix/extend-prefix.js';
import type { JobsRepo } from './repositories/jobs.js';
import type { NamespaceRepo } from './repositories/namespace.js';

/** What deleting a dataset touches; the app satisfies it. */
export interface DatasetLifecycleDeps {
  pg: pg.Pool;
  reservationsRepo: Pick<ReservationsRepo, 'releaseDataset'>;
  events: Pick<EventBus, 'publish'>;
}

/** Remove a dataset for good: its reservations give their bytes back, rows cascade. */
async function finalize(
  deps: DatasetLifecycleDeps,
  tx: Queryable,
  datasetId: string,
): Promise<void> {
  await deps.reservationsRepo.releaseDataset(tx, datasetId);
  await deleteDatasetRow(tx, datasetId);
}

/**
 * Delete a dataset: with donors, mark it `deleting` and queue one delete job per unrevoked
 * donor (the row goes when the last one finishes); without, remove it now.
 * Returns whether it is already gone.
 */
export async function deleteDataset(
  deps: DatasetLifecycleDeps,
  datasetId: string,
): Promise<{ deleted: boolean }> {
  const result = await withTransaction(deps.pg, async (tx) => {
    const state = await lockDatasetState(tx, datasetId);
    if (state === undefined)
      throw new FreeLoaderError('DATASET_NOT_FOUND', `no dataset ${datasetId}`);
    if (state === 'deleting') return { deleted: false, changed: false };
    await abandonExtensionIn(tx, datasetId);
    await cancelQueuedJobs(tx, datasetId);
    const donors = await donorsOfDataset(tx, datasetId);
    const live = await unrevokedAgents(tx, donors);
    if (live.length === 0) {
      await finalize(deps, tx, datasetId);
      return { deleted: true, changed: true };
    }
    await markDeleting(tx, datasetId);
    for (const id of live) {
      await enqueueJob(tx, { kind: 'delete', datasetId, agentId: id, payload: { datasetId } });
    }
    return { deleted: false, changed: true };
  });
  if (result.changed) {
    deps.events.publish({
      type: 'dataset',
      datasetId,
      state: result.deleted ? 'deleted' : 'deleting',
    });
  }
  return { deleted: result.deleted };
}

/**
 * A donor finished deleting a `deleting` dataset: its ledger follows now, not when the slowest
 * donor is done. (Delete jobs of trims and abandoned extensions gave their bytes back already.)
 */
async function releaseDeletedOn(
  deps: DatasetLifecycleDeps,
  datasetId: string,
  agentId: string,
): Promise<void> {
  await withTransaction(deps.pg, async (tx) => {
    if ((await lockDatasetState(tx, datasetId)) === 'deleting') {
      await deps.reservationsRepo.releaseDataset(tx, datasetId, agentId);
    }
  });
}

/** What settling a finished job touches: deletes, import outcomes, extensions; the app satisfies it. */
export type JobFinishedDeps = DatasetLifecycleDeps &
  ImportOutcomeDeps &
  DiskFullDeps &
  ExtensionSettleDeps & {
    jobsRepo: Pick<JobsRepo, 'unfinished'>;
    namespaceRepo: Pick<NamespaceRepo, 'get'>;
  };

/**
 * Consequences of a finished job for its dataset: the last delete job removes the dataset; a
 * failed import fails it (unless it failed with DISK_FULL and its share could move to other
 * donors); the last successful import makes it ready.
 */
export async function onJobFinished(
  deps: JobFinishedDeps,
  job: JobView,
  errorCode?: string,
): Promise<void> {
  const datasetId = job.datasetId;
  if (!datasetId) return;
  if (job.kind === 'delete') {
    if (job.state === 'done' && job.agentId) await releaseDeletedOn(deps, datasetId, job.agentId);
    if ((await deps.jobsRepo.unfinished(datasetId, 'delete')) > 0) return;
    const gone = await withTransaction(deps.pg, async (tx) => {
      if ((await lockDatasetState(tx, datasetId)) !== 'deleting') return false;
      await finalize(deps, tx, datasetId);
      return true;
    });
    if (gone) deps.events.publish({ type: 'dataset', datasetId, state: 'deleted' });
    return;
  }
  if (job.kind !== 'import') return;
  if (isExtensionJob(job)) return onExtensionJobFinished(deps, job);
  const dataset = await deps.namespaceRepo.get(datasetId);
  if (!dataset || dataset.state !== 'importing') return;
  if (job.state === 'failed') {
    // A full disk is that donor's problem, not the import's: its share moves to donors with room.
    if (errorCode === 'DISK_FULL') {
      const cannot = await replaceFullDonor(deps, dataset, job, job.payload);
      if (cannot === undefined) return;
      await failImport(deps, datasetId, `${cannot} [DISK_FULL]`, job);
      return;
    }
    await failImport(deps, datasetId, job.error ?? 'import failed', job);
  } else if ((await deps.jobsRepo.unfinished(datasetId, 'import')) === 0) {
    await completeImport(deps, dataset);
  }
}
