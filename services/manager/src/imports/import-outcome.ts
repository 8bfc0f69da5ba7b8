import type { FastifyInstance } from 'fastify';
import { SHA256_BYTES, morselCount, type DatasetView, type JobView } from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { enqueueJob } from '../repositories/jobs.js';
import { donorsOfDataset, getHashes } from '../repositories/placement.js';
import { importCacheBytes } from '../prefix/import-policy.js';

/** Morsels of a dataset whose SHA-256 the manager has not received. */
export function missingHashes(dataset: DatasetView, hashes: Buffer): number {
  const expected = morselCount(dataset.sizeBytes, dataset.morselSize);
  let missing = Math.max(0, expected - Math.floor(hashes.length / SHA256_BYTES));
  for (let i = 0; i < Math.min(expected, hashes.length / SHA256_BYTES); i++) {
    const digest = hashes.subarray(i * SHA256_BYTES, (i + 1) * SHA256_BYTES);
    if (digest.every((b) => b === 0)) missing++;
  }
  return missing;
}

/**
 * The last import job finished well: the dataset becomes readable only if every morsel's hash
 * arrived and every reservation could be committed; otherwise it fails like any import.
 */
export async function completeImport(app: FastifyInstance, dataset: DatasetView): Promise<void> {
  // A prefix import (seed 002 §4.1) owes hashes only for the morsels it caches.
  const cached = { ...dataset, sizeBytes: await importCacheBytes(app, dataset) };
  const missing = missingHashes(cached, await getHashes(app.pg, dataset.id));
  if (missing > 0) {
    await failImport(app, dataset.id, `${missing} morsel(s) were never reported stored`);
    return;
  }
  const outcome = await withTransaction(app.pg, async (tx) => {
    const { rows } = await tx.query<{ state: string }>(
      'SELECT state FROM datasets WHERE id = $1 FOR UPDATE',
      [dataset.id],
    );
    if (rows[0]?.state !== 'importing') return 'gone';
    const { expired } = await app.reservationsRepo.commitDataset(tx, dataset.id);
    if (expired > 0) return 'expired';
    await tx.query(
      `UPDATE datasets SET state = 'ready', error = NULL,
         cached_bytes = coalesce(import_cache_bytes, size_bytes) WHERE id = $1`,
      [dataset.id],
    );
    return 'ready';
  });
  if (outcome === 'expired') {
    await failImport(app, dataset.id, 'the import outlived its space reservation');
  } else if (outcome === 'ready') {
    app.events.publish({ type: 'dataset', datasetId: dataset.id, state: 'ready' });
  }
}

/**
 * An import failed: stop its other jobs (running ones see the cancellation at their next
 * progress report and free what they stored), give the space back, and ask every donor to drop
 * whatever it already holds. The dataset stays visible as `failed` with the reason.
 */
export async function failImport(
  app: FastifyInstance,
  datasetId: string,
  reason: string,
  failedJob?: JobView,
): Promise<void> {
  const changed = await withTransaction(app.pg, async (tx) => {
    const { rows } = await tx.query<{ state: string }>(
      'SELECT state FROM datasets WHERE id = $1 FOR UPDATE',
      [datasetId],
    );
    if (rows[0]?.state !== 'importing') return false;
    await tx.query(
      `UPDATE datasets SET state = 'failed', error = $2, cached_bytes = 0 WHERE id = $1`,
      [datasetId, reason],
    );
    await tx.query(
      `UPDATE jobs SET state = 'cancelled', rate = 0, updated_at = now()
       WHERE dataset_id = $1 AND kind = 'import' AND state IN ('queued', 'running')`,
      [datasetId],
    );
    await app.reservationsRepo.releaseDataset(tx, datasetId);
    for (const agentId of await donorsOfDataset(tx, datasetId)) {
      if (agentId === failedJob?.agentId) continue; // it freed its own morsels before reporting
      await enqueueJob(tx, { kind: 'delete', datasetId, agentId, payload: { datasetId } });
    }
    return true;
  });
  if (changed) app.events.publish({ type: 'dataset', datasetId, state: 'failed' });
}
