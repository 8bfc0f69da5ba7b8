import type { PlacementPolicy } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';

/**
 * A dataset's lifecycle state, its row locked until the caller's transaction ends (imports,
 * deletes and relocations decide on it); undefined when there is no such dataset. `placement`
 * takes the weaker FOR NO KEY UPDATE: a second placement change (or state decision) waits, but
 * rows that only reference the dataset (reservations, jobs) may still be inserted meanwhile by
 * other transactions — a placement change that reserves space while holding the lock needs that.
 */
export async function lockDatasetState(
  tx: Queryable,
  datasetId: string,
  strength: 'update' | 'placement' = 'update',
): Promise<string | undefined> {
  const lock = strength === 'placement' ? 'FOR NO KEY UPDATE' : 'FOR UPDATE';
  const { rows } = await tx.query<{ state: string }>(
    `SELECT state FROM datasets WHERE id = $1 ${lock}`,
    [datasetId],
  );
  return rows[0]?.state;
}

/** Remove the dataset row (placement, hashes and the like cascade). */
export async function deleteDatasetRow(db: Queryable, datasetId: string): Promise<void> {
  await db.query('DELETE FROM datasets WHERE id = $1', [datasetId]);
}

/** The dataset waits for its delete jobs. */
export async function markDeleting(db: Queryable, datasetId: string): Promise<void> {
  await db.query(`UPDATE datasets SET state = 'deleting' WHERE id = $1`, [datasetId]);
}

/** Every morsel arrived: readable, caching what the import was sized for. */
export async function markImported(db: Queryable, datasetId: string): Promise<void> {
  await db.query(
    `UPDATE datasets SET state = 'ready', error = NULL,
         cached_bytes = coalesce(import_cache_bytes, size_bytes) WHERE id = $1`,
    [datasetId],
  );
}

/** The import failed with `reason`: nothing of it counts as cached. */
export async function markImportFailed(
  db: Queryable,
  datasetId: string,
  reason: string,
): Promise<void> {
  await db.query(
    `UPDATE datasets SET state = 'failed', error = $2, cached_bytes = 0 WHERE id = $1`,
    [datasetId, reason],
  );
}

/** Which policy placed the dataset (shown with it, reused by a retry). */
export async function setPlacementPolicy(
  db: Queryable,
  datasetId: string,
  policy: PlacementPolicy,
): Promise<void> {
  await db.query('UPDATE datasets SET placement_policy = $2 WHERE id = $1', [datasetId, policy]);
}

/** Remember a dataset's wanted copies and the availability target they were chosen for. */
export async function setReplication(
  db: Queryable,
  datasetId: string,
  replicas: number,
  availabilityTarget: number | null,
): Promise<void> {
  await db.query('UPDATE datasets SET replicas = $2, availability_target = $3 WHERE id = $1', [
    datasetId,
    replicas,
    availabilityTarget,
  ]);
}
