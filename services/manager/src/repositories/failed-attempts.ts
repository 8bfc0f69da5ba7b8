import type { FailedAttempt, FailedAttemptQuery } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import { iso } from './rows.js';

interface Row {
  id: string;
  kind: string;
  dataset_id: string | null;
  dataset_path: string | null;
  agent_id: string | null;
  agent_name: string | null;
  error: string;
  updated_at: Date;
}

/**
 * Failed jobs, newest first: when, on which donor (by name), for which dataset, and the error.
 * A dataset's list includes the failed jobs of the attempts its retries replaced.
 *
 * @example await failedAttempts(pool, { datasetId, limit: 20 }) // [{ agentName: 'lab-3', error: '…' }]
 */
export async function failedAttempts(
  db: Queryable,
  q: FailedAttemptQuery = {},
): Promise<FailedAttempt[]> {
  const { rows } = await db.query<Row>(
    `SELECT j.id, j.kind, o.id AS dataset_id, j.agent_id, a.name AS agent_name, j.error,
            j.updated_at,
            (SELECT CASE WHEN f.path = '' THEN d.name ELSE f.path || '/' || d.name END
             FROM datasets d CROSS JOIN LATERAL folder_path(d.folder_id) AS f(path)
             WHERE d.id = o.id) AS dataset_path
     FROM jobs j LEFT JOIN agents a ON a.id = j.agent_id
     -- A job of a retried attempt belongs to the dataset that carries it in earlier_failures.
     CROSS JOIN LATERAL (SELECT coalesce(j.dataset_id, (
       SELECT d.id FROM datasets d WHERE j.id = ANY(d.earlier_failures) LIMIT 1)) AS id) o
     WHERE j.state = 'failed' AND j.error IS NOT NULL
       AND ($1::uuid IS NULL OR o.id = $1::uuid)
     ORDER BY j.updated_at DESC LIMIT $2`,
    [q.datasetId ?? null, q.limit ?? 50],
  );
  return rows.map((r) => ({
    jobId: r.id,
    kind: r.kind,
    datasetId: r.dataset_id,
    datasetPath: r.dataset_path,
    agentId: r.agent_id,
    agentName: r.agent_name,
    error: r.error,
    at: iso(r.updated_at),
  }));
}
