import { SHA256_BYTES, morselCount, type DatasetView, type JobView } from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { enqueueJob } from '../repositories/jobs.js';
import { donorsOfDataset, getHashes } from '../repositories/placement.js';
import { importCacheBytes } from '../placement/import-policy.js';
import { cancelImportJobs } from '../repositories/dataset-jobs.js';
import { lockDatasetState, markImported, markImportFailed } from '../repositories/datasets.js';
import type { ImportDeps } from './import-deps.js';

/** What finishing or failing an import touches. */
export type ImportOutcomeDeps = Pick<ImportDeps, 'pg' | 'reservationsRepo' | 'events'>;

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
export async function completeImport(deps: ImportOutcomeDeps, dataset: DatasetView): Promise<void> {
  // A prefix import (seed 002 §4.1) owes hashes only for the morsels it caches.
  const cached = { ...dataset, sizeBytes: await importCacheBytes(deps, dataset) };
  const missing = missingHashes(cached, await getHashes(deps.pg, dataset.id));
  if (missing > 0) {
    await failImport(deps, dataset.id, `${missing} morsel(s) were never reported stored`);
    return;
  }
  const outcome = await withTransaction(deps.pg, async (tx) => {
    if ((await lockDatasetState(tx, dataset.id)) !== 'importing') return 'gone';
    const { expired } = await deps.reservationsRepo.commitDataset(tx, dataset.id);
    if (expired > 0) return 'expired';
    await markImported(tx, dataset.id);
    return 'ready';
  });
  if (outcome === 'expired') {
    await failImport(deps, dataset.id, 'the import outlived its space reservation');
  } else if (outcome === 'ready') {
    deps.events.publish({ type: 'dataset', datasetId: dataset.id, state: 'ready' });
  }
}

/**
 * An import failed: stop its other jobs (running ones see the cancellation at their next
 * progress report and free what they stored), give the space back, and ask every donor to drop
 * whatever it already holds. The dataset stays visible as `failed` with the reason.
 */
export async function failImport(
  deps: ImportOutcomeDeps,
  datasetId: string,
  reason: string,
  failedJob?: JobView,
): Promise<void> {
  const changed = await withTransaction(deps.pg, async (tx) => {
    if ((await lockDatasetState(tx, datasetId)) !== 'importing') return false;
    await markImportFailed(tx, datasetId, reason);
    await cancelImportJobs(tx, datasetId);
    await deps.reservationsRepo.releaseDataset(tx, datasetId);
    for (const agentId of await donorsOfDataset(tx, datasetId)) {
      if (agentId === failedJob?.agentId) continue; // it freed its own morsels before reporting
      await enqueueJob(tx, { kind: 'delete', datasetId, agentId, payload: { datasetId } });
    }
    return true;
  });
  if (changed) deps.events.publish({ type: 'dataset', datasetId, state: 'failed' });
}
