import type { ImportJobPayload } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';

/** Cancel a dataset's jobs that have not started (a delete supersedes them). */
export async function cancelQueuedJobs(db: Queryable, datasetId: string): Promise<void> {
  await db.query(
    `UPDATE jobs SET state = 'cancelled', updated_at = now()
       WHERE dataset_id = $1 AND state = 'queued'`,
    [datasetId],
  );
}

/** Cancel a failed import's other jobs (running ones see it at their next progress report). */
export async function cancelImportJobs(db: Queryable, datasetId: string): Promise<void> {
  await db.query(
    `UPDATE jobs SET state = 'cancelled', rate = 0, updated_at = now()
       WHERE dataset_id = $1 AND kind = 'import' AND state IN ('queued', 'running')`,
    [datasetId],
  );
}

/** Agents that still owe an import (a queued or running import job). */
export async function donorsOwingImports(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ agent_id: string }>(
    `SELECT DISTINCT agent_id FROM jobs
         WHERE kind = 'import' AND state IN ('queued', 'running') AND dataset_id IS NOT NULL`,
  );
  return rows.map((r) => r.agent_id);
}

/** Datasets with an import job still owed by `agentId` (queued or running). */
export async function importsOwedBy(db: Queryable, agentId: string): Promise<string[]> {
  const { rows } = await db.query<{ dataset_id: string }>(
    `SELECT DISTINCT dataset_id FROM jobs
         WHERE kind = 'import' AND state IN ('queued', 'running') AND agent_id = $1 AND dataset_id IS NOT NULL`,
    [agentId],
  );
  return rows.map((r) => r.dataset_id);
}

/** An import job given up on because its donor died: whose it was and what it carried. */
export interface AbandonedImportJob {
  id: string;
  agentId: string;
  payload: ImportJobPayload;
}

/**
 * Fail the import jobs `agentId` still owes for `datasetId` (its donor died; error code
 * UNAVAILABLE), so they never count as unfinished again; returns them.
 */
export async function abandonImportJobs(
  db: Queryable,
  datasetId: string,
  agentId: string,
  reason: string,
): Promise<AbandonedImportJob[]> {
  const { rows } = await db.query<{ id: string; agent_id: string; payload: ImportJobPayload }>(
    `UPDATE jobs SET state = 'failed', error = $3, error_code = 'UNAVAILABLE', rate = 0,
            lease_expires_at = NULL, updated_at = now()
       WHERE dataset_id = $1 AND agent_id = $2 AND kind = 'import'
         AND state IN ('queued', 'running')
     RETURNING id, agent_id, payload`,
    [datasetId, agentId, reason],
  );
  return rows.map((r) => ({ id: r.id, agentId: r.agent_id, payload: r.payload }));
}

/** Donors whose import jobs for `datasetId` were given up on because they died. */
export async function abandonedImporters(db: Queryable, datasetId: string): Promise<string[]> {
  const { rows } = await db.query<{ agent_id: string }>(
    `SELECT DISTINCT agent_id FROM jobs
       WHERE dataset_id = $1 AND kind = 'import' AND state = 'failed'
         AND error_code = 'UNAVAILABLE' AND agent_id IS NOT NULL`,
    [datasetId],
  );
  return rows.map((r) => r.agent_id);
}
