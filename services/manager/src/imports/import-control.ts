import { FreeLoaderError, type ImportControlResult, type UserView } from '@freeloader/protocol';
import type { Share } from '../auth/permissions.js';
import { withTransaction } from '../db/pool.js';
import {
  carryFailures,
  failedJobsOf,
  importControlRow,
  markFailed,
  removeFailedDataset,
  type ImportControlRow,
} from '../repositories/import-control.js';
import { setReplication } from '../repositories/datasets.js';
import { adoptHistory } from '../repositories/history.js';
import type { ImportDeps } from './import-deps.js';
import { failImport } from './import-outcome.js';
import { startImport } from './start-import.js';

/** The dataset's control row (who may cancel or retry it is the route's check: 'manage'). */
async function controlled(deps: ImportDeps, datasetId: string) {
  const row = await importControlRow(deps.pg, datasetId);
  if (!row) throw new FreeLoaderError('DATASET_NOT_FOUND', `no dataset ${datasetId}`);
  return row;
}

/**
 * Cancel an import in flight: its jobs are cancelled (running ones stop at their next progress
 * report and free what they stored), its reservations are released, donors drop what they hold,
 * and the dataset ends `failed` with "cancelled by <user>", so it can be retried or deleted.
 *
 * @example await cancelImport(deps, datasetId, req.user!) // { datasetId, state: 'failed' }
 */
export async function cancelImport(
  deps: ImportDeps,
  datasetId: string,
  user: UserView,
): Promise<ImportControlResult> {
  const row = await controlled(deps, datasetId);
  if (row.state !== 'importing') {
    throw new FreeLoaderError('CONFLICT', `${row.path} is ${row.state}, not importing`);
  }
  await failImport(deps, datasetId, `cancelled by ${user.username}`);
  const after = await importControlRow(deps.pg, datasetId);
  if (after?.state === 'importing') {
    throw new FreeLoaderError('CONFLICT', `${row.path} could not be cancelled`);
  }
  deps.log.info({ dataset: datasetId, by: user.username }, 'import cancelled');
  return { datasetId, state: 'failed' };
}

/**
 * Retry a failed import: the failed dataset row goes (its delete jobs still clean the donors)
 * and the same source is imported again under the same path, as the same starter, with the
 * same placement policy. The new dataset keeps the old one's owner, shares, failed attempts and
 * throughput history. If the new import
 * cannot start (source gone, no space) the path is left `failed` with that reason: nothing is
 * lost, and the caller gets the error.
 */
export async function retryImport(
  deps: ImportDeps,
  datasetId: string,
  user: UserView,
): Promise<ImportControlResult> {
  const row = await controlled(deps, datasetId);
  if (row.state !== 'failed') {
    throw new FreeLoaderError(
      'CONFLICT',
      `${row.path} is ${row.state}; only a failed import can be retried`,
    );
  }
  if (!row.sourceUri) {
    throw new FreeLoaderError('CONFLICT', `${row.path} has no source to import from`);
  }
  const taken = await withTransaction(deps.pg, async (tx) => {
    const locked = await importControlRow(tx, datasetId, true);
    if (locked?.state !== 'failed') return null;
    const jobs = await failedJobsOf(tx, datasetId);
    const shares = await deps.ownershipRepo.ownSharesOf(tx, datasetId);
    await removeFailedDataset(tx, datasetId);
    return { jobs, shares, row: locked };
  });
  if (!taken) throw new FreeLoaderError('CONFLICT', `${row.path} is already being retried`);
  const starter = taken.row.createdBy ?? user.id;
  deps.events.publish({ type: 'dataset', datasetId, state: 'deleted' });
  try {
    const started = await startImport(
      deps,
      {
        uri: row.sourceUri,
        name: row.path,
        ...(row.policy ? { policy: row.policy } : {}),
        ...(row.availabilityTarget !== null
          ? { availability: row.availabilityTarget }
          : { replicas: row.replicas }),
      },
      starter,
    );
    const id = started.dataset!.id;
    await keepOwnership(deps, id, taken.row.ownerId, taken.shares);
    await carryFailures(deps.pg, taken.jobs, id);
    await adoptHistory(deps.pg, 'dataset_rate', datasetId, id);
    deps.log.info({ dataset: id, previous: datasetId, by: user.username }, 'import retried');
    return {
      datasetId: id,
      state: started.dataset!.state === 'ready' ? 'ready' : 'importing',
      previousDatasetId: datasetId,
    };
  } catch (e) {
    await restoreFailed(deps, taken.row, taken.jobs, taken.shares, e).catch((err: unknown) =>
      deps.log.error({ err }, 'could not record the failed retry'),
    );
    throw e;
  }
}

/** A retry that could not start leaves the path `failed` with the new reason. */
async function restoreFailed(
  deps: ImportDeps,
  row: ImportControlRow,
  jobs: string[],
  shares: readonly Share[],
  cause: unknown,
): Promise<void> {
  const again = await deps.namespaceRepo.createDataset({
    path: row.path,
    sourceUri: row.sourceUri,
    sizeBytes: row.sizeBytes,
    state: 'failed',
  });
  await setReplication(deps.pg, again.id, row.replicas, row.availabilityTarget);
  const reason = cause instanceof Error ? cause.message : String(cause);
  await markFailed(deps.pg, again.id, `retry failed: ${reason}`, row.createdBy);
  await keepOwnership(deps, again.id, row.ownerId, shares);
  await carryFailures(deps.pg, jobs, again.id);
  deps.events.publish({ type: 'dataset', datasetId: again.id, state: 'failed' });
}

/** The retried dataset is the old one's: same owner (it may have been chowned), same shares. */
async function keepOwnership(
  deps: ImportDeps,
  datasetId: string,
  ownerId: string | null,
  shares: readonly Share[],
): Promise<void> {
  const item = { kind: 'dataset' as const, id: datasetId };
  if (ownerId) await deps.ownershipRepo.chown(item, ownerId);
  for (const s of shares) await deps.ownershipRepo.share(item, s.groupId, s.manage);
}
