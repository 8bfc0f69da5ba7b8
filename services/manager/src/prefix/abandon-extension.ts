import type { Extent } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import { enqueueJob } from '../repositories/jobs.js';

/** A prefix extension in flight, as `datasets.extension` holds it. */
export interface ExtensionRecord {
  /** The cached part when it started (whole morsels): readers keep using it. */
  fromBytes: number;
  /** The cached part once it commits. */
  toBytes: number;
  /** Placement of the new morsels [fromBytes, toBytes) only. */
  extents: Extent[];
  startedAt: string;
}

/**
 * Give up a dataset's extension in flight, inside the caller's transaction: its unfinished import
 * jobs are cancelled (a running one sees it at its next progress report and frees what it
 * stored), its active reservations are released (the committed ones hold the old prefix), and
 * every unrevoked donor it named is asked to drop the morsels from the extension's first on.
 * Placement and `cached_bytes` were never touched, so the old prefix stays readable. The read
 * score starts again from zero, so a failing extension is not retried on the very next read.
 * Returns the abandoned extension, or null when none was in flight.
 *
 * @example await withTransaction(pool, (tx) => abandonExtensionIn(tx, datasetId))
 */
export async function abandonExtensionIn(
  tx: Queryable,
  datasetId: string,
): Promise<ExtensionRecord | null> {
  const { rows } = await tx.query<{ extension: ExtensionRecord | null; morsel_size: number }>(
    'SELECT extension, morsel_size FROM datasets WHERE id = $1 FOR UPDATE',
    [datasetId],
  );
  const ext = rows[0]?.extension;
  if (!ext) return null;
  await tx.query(
    `UPDATE jobs SET state = 'cancelled', rate = 0, updated_at = now()
     WHERE dataset_id = $1 AND kind = 'import' AND state IN ('queued', 'running')`,
    [datasetId],
  );
  // Active reservations never reached used space: releasing them is only a state change.
  await tx.query(
    `UPDATE reservations SET state = 'released', updated_at = now()
     WHERE dataset_id = $1 AND state = 'active'`,
    [datasetId],
  );
  const named = [...new Set(ext.extents.flatMap((e) => e.donors))];
  const { rows: donors } = await tx.query<{ id: string }>(
    'SELECT id FROM agents WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL ORDER BY id',
    [named],
  );
  const fromMorsel = Math.floor(ext.fromBytes / rows[0]!.morsel_size);
  for (const { id } of donors) {
    await enqueueJob(tx, {
      kind: 'delete',
      datasetId,
      agentId: id,
      payload: { datasetId, fromMorsel },
    });
  }
  // The reads that earned it are spent: a dataset whose source changed is not retried at once.
  await tx.query('UPDATE datasets SET extension = NULL, read_score = 0 WHERE id = $1', [datasetId]);
  return ext;
}
