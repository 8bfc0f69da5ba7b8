/** The log of committed repair units (`repair_done`) and the rate running jobs report. */
import type { Queryable } from '../db/pool.js';

/** Bytes repaired since `sinceS` seconds ago. */
export async function repairedBytesSince(db: Queryable, sinceS: number): Promise<number> {
  const { rows } = await db.query<{ b: string }>(
    `SELECT coalesce(sum(bytes), 0) AS b FROM repair_done
     WHERE done_at > now() - make_interval(secs => $1)`,
    [sinceS],
  );
  return Number(rows[0]?.b ?? 0);
}

/** Sum of the rates running repair jobs last reported (bytes/s). */
export async function repairRate(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ r: number | null }>(
    `SELECT sum(rate)::float8 AS r FROM jobs WHERE kind = 'repair' AND state = 'running'`,
  );
  return rows[0]?.r ?? 0;
}

/** Completed units with their times (oldest first), for rate measurements. */
export async function repairLog(
  db: Queryable,
  sinceS: number,
): Promise<Array<{ bytes: number; at: Date; agentId: string | null }>> {
  const { rows } = await db.query<{ bytes: string; done_at: Date; agent_id: string | null }>(
    `SELECT bytes, done_at, agent_id FROM repair_done
     WHERE done_at > now() - make_interval(secs => $1) ORDER BY done_at`,
    [sinceS],
  );
  return rows.map((r) => ({ bytes: Number(r.bytes), at: r.done_at, agentId: r.agent_id }));
}

/** Drop log rows older than a day. */
export async function pruneRepairLog(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM repair_done WHERE done_at < now() - interval '1 day'`);
}
