import type { Queryable } from '../db/pool.js';
import { enqueueJob } from '../repositories/jobs.js';
import {
  cancelUnfinishedImports,
  clearExtension,
  lockExtension,
  releaseActiveReservations,
  unrevokedAgents,
  type ExtensionRecord,
} from '../repositories/prefix-extensions.js';

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
  const row = await lockExtension(tx, datasetId);
  const ext = row?.extension;
  if (!ext) return null;
  await cancelUnfinishedImports(tx, datasetId);
  // Active reservations never reached used space: releasing them is only a state change.
  await releaseActiveReservations(tx, datasetId);
  const named = [...new Set(ext.extents.flatMap((e) => e.donors))];
  const donors = await unrevokedAgents(tx, named);
  const fromMorsel = Math.floor(ext.fromBytes / row.morsel_size);
  for (const id of donors) {
    await enqueueJob(tx, {
      kind: 'delete',
      datasetId,
      agentId: id,
      payload: { datasetId, fromMorsel },
    });
  }
  // The reads that earned it are spent: a dataset whose source changed is not retried at once.
  await clearExtension(tx, datasetId);
  return ext;
}
