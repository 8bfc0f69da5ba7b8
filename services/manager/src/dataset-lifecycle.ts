import type { FastifyInstance } from 'fastify';
import { FreeLoaderError, type JobView } from '@freeloader/protocol';
import { withTransaction, type Queryable } from './db/pool.js';
import { enqueueJob } from './repositories/jobs.js';
import { completeImport, failImport } from './imports/import-outcome.js';
import { donorsOfDataset } from './repositories/placement.js';
import { abandonExtensionIn } from './prefix/abandon-extension.js';
import { isExtensionJob, onExtensionJobFinished } from './prefix/extend-prefix.js';

/** Remove a dataset for good: its reservations give their bytes back, rows cascade. */
async function finalize(app: FastifyInstance, tx: Queryable, datasetId: string): Promise<void> {
  await app.reservationsRepo.releaseDataset(tx, datasetId);
  await tx.query('DELETE FROM datasets WHERE id = $1', [datasetId]);
}

/**
 * Delete a dataset: with donors, mark it `deleting` and queue one delete job per unrevoked
 * donor (the row goes when the last one finishes); without, remove it now.
 * Returns whether it is already gone.
 */
export async function deleteDataset(
  app: FastifyInstance,
  datasetId: string,
): Promise<{ deleted: boolean }> {
  const result = await withTransaction(app.pg, async (tx) => {
    const { rows } = await tx.query<{ state: string }>(
      'SELECT state FROM datasets WHERE id = $1 FOR UPDATE',
      [datasetId],
    );
    if (!rows[0]) throw new FreeLoaderError('DATASET_NOT_FOUND', `no dataset ${datasetId}`);
    if (rows[0].state === 'deleting') return { deleted: false, changed: false };
    await abandonExtensionIn(tx, datasetId);
    await tx.query(
      `UPDATE jobs SET state = 'cancelled', updated_at = now()
       WHERE dataset_id = $1 AND state = 'queued'`,
      [datasetId],
    );
    const donors = await donorsOfDataset(tx, datasetId);
    const { rows: live } = await tx.query<{ id: string }>(
      'SELECT id FROM agents WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL ORDER BY id',
      [donors],
    );
    if (live.length === 0) {
      await finalize(app, tx, datasetId);
      return { deleted: true, changed: true };
    }
    await tx.query(`UPDATE datasets SET state = 'deleting' WHERE id = $1`, [datasetId]);
    for (const { id } of live) {
      await enqueueJob(tx, { kind: 'delete', datasetId, agentId: id, payload: { datasetId } });
    }
    return { deleted: false, changed: true };
  });
  if (result.changed) {
    app.events.publish({
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
  app: FastifyInstance,
  datasetId: string,
  agentId: string,
): Promise<void> {
  await withTransaction(app.pg, async (tx) => {
    const { rows } = await tx.query<{ state: string }>(
      'SELECT state FROM datasets WHERE id = $1 FOR UPDATE',
      [datasetId],
    );
    if (rows[0]?.state === 'deleting') {
      await app.reservationsRepo.releaseDataset(tx, datasetId, agentId);
    }
  });
}

/**
 * Consequences of a finished job for its dataset: the last delete job removes the dataset; a
 * failed import fails it; the last successful import makes it ready.
 */
export async function onJobFinished(app: FastifyInstance, job: JobView): Promise<void> {
  const datasetId = job.datasetId;
  if (!datasetId) return;
  if (job.kind === 'delete') {
    if (job.state === 'done' && job.agentId) await releaseDeletedOn(app, datasetId, job.agentId);
    if ((await app.jobsRepo.unfinished(datasetId, 'delete')) > 0) return;
    const gone = await withTransaction(app.pg, async (tx) => {
      const { rows } = await tx.query<{ state: string }>(
        'SELECT state FROM datasets WHERE id = $1 FOR UPDATE',
        [datasetId],
      );
      if (rows[0]?.state !== 'deleting') return false;
      await finalize(app, tx, datasetId);
      return true;
    });
    if (gone) app.events.publish({ type: 'dataset', datasetId, state: 'deleted' });
    return;
  }
  if (job.kind !== 'import') return;
  if (isExtensionJob(job)) return onExtensionJobFinished(app, job);
  const dataset = await app.namespaceRepo.get(datasetId);
  if (!dataset || dataset.state !== 'importing') return;
  if (job.state === 'failed') {
    await failImport(app, datasetId, job.error ?? 'import failed', job);
  } else if ((await app.jobsRepo.unfinished(datasetId, 'import')) === 0) {
    await completeImport(app, dataset);
  }
}
