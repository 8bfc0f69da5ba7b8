/** Repair jobs as the scheduler sees them: running, stuck, and deletes they must not race. */
import type { Queryable } from '../db/pool.js';

/** Repair jobs each agent has run (destination), for least-transfers-count. */
export async function repairTransfers(db: Queryable): Promise<Map<string, number>> {
  const { rows } = await db.query<{ agent_id: string; n: string }>(
    `SELECT agent_id, count(*) AS n FROM jobs WHERE kind = 'repair' AND agent_id IS NOT NULL
     GROUP BY agent_id`,
  );
  return new Map(rows.map((r) => [r.agent_id, Number(r.n)]));
}

/** Repair jobs not yet finished: their destination, the donors they read from, source use. */
export async function runningRepairJobs(
  db: Queryable,
): Promise<Array<{ agentId: string; sourceAgents: string[]; seeds: boolean }>> {
  const { rows } = await db.query<{ agent_id: string; sources: string[] | null; seeds: boolean }>(
    `SELECT agent_id, ARRAY(SELECT jsonb_array_elements_text(payload->'sourceAgents')) AS sources,
            coalesce((payload->>'seeds')::boolean, false) AS seeds
     FROM jobs WHERE kind = 'repair' AND state IN ('queued', 'running') AND agent_id IS NOT NULL`,
  );
  return rows.map((r) => ({ agentId: r.agent_id, sourceAgents: r.sources ?? [], seeds: r.seeds }));
}

/** Unfinished repair jobs: id, destination, state, and seconds since they last reported. */
export async function unfinishedRepairJobs(
  db: Queryable,
): Promise<Array<{ id: string; agentId: string; state: string; silentS: number }>> {
  const { rows } = await db.query<{ id: string; agent_id: string; state: string; silent: number }>(
    `SELECT id, agent_id, state, extract(epoch FROM now() - updated_at)::float8 AS silent
     FROM jobs WHERE kind = 'repair' AND state IN ('queued', 'running')`,
  );
  return rows.map((r) => ({ id: r.id, agentId: r.agent_id, state: r.state, silentS: r.silent }));
}

/** Give up on repair jobs (their units go back to waiting at the next requeue). */
export async function cancelJobs(
  db: Queryable,
  ids: readonly string[],
  why: string,
): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `UPDATE jobs SET state = 'cancelled', error = $2, updated_at = now()
     WHERE id = ANY($1::uuid[]) AND state IN ('queued', 'running')`,
    [ids, why],
  );
}

/** `agentId:datasetId` of every delete job not yet run (a destination must not race them). */
export async function pendingDeletes(db: Queryable): Promise<Set<string>> {
  const { rows } = await db.query<{ k: string }>(
    `SELECT agent_id::text || ':' || dataset_id::text AS k FROM jobs
     WHERE kind = 'delete' AND state IN ('queued', 'running') AND agent_id IS NOT NULL
       AND dataset_id IS NOT NULL`,
  );
  return new Set(rows.map((r) => r.k));
}
