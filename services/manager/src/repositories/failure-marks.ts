/** Donors' failure marks (lost, leaving, revoked) as repair reads and writes them. */
import type { Queryable } from '../db/pool.js';

/** An agent's failure marks as the repair scheduler reads them. */
export interface FailureMarks {
  id: string;
  url: string;
  lost: boolean;
  leaving: boolean;
  revoked: boolean;
  bandwidthOnly: boolean;
  /** quota − used − active reservations (bytes; may be negative). */
  freeBytes: number;
}

/** Every enrolled agent with its failure marks and free space. */
export async function failureMarks(db: Queryable): Promise<FailureMarks[]> {
  const { rows } = await db.query<{
    id: string;
    url: string;
    lost: boolean;
    leaving: boolean;
    revoked: boolean;
    bandwidth_only: boolean;
    free: string;
  }>(
    `SELECT a.id, a.url, a.lost_at IS NOT NULL AS lost, a.leaving_at IS NOT NULL AS leaving,
            a.revoked_at IS NOT NULL AS revoked, a.bandwidth_only,
            a.quota_bytes - a.used_bytes - coalesce((SELECT sum(r.bytes) FROM reservations r
              WHERE r.agent_id = a.id AND r.state = 'active' AND r.expires_at > now()), 0) AS free
     FROM agents a`,
  );
  return rows.map((r) => ({
    id: r.id,
    url: r.url,
    lost: r.lost,
    leaving: r.leaving,
    revoked: r.revoked,
    bandwidthOnly: r.bandwidth_only,
    freeBytes: Number(r.free),
  }));
}

/** Mark a donor lost (true when it was not already). */
export async function markLost(db: Queryable, agentId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE agents SET lost_at = now() WHERE id = $1 AND lost_at IS NULL AND revoked_at IS NULL',
    [agentId],
  );
  return (rowCount ?? 0) > 0;
}

/** A lost donor heartbeats again: clear the mark (true when it was set). */
export async function clearLost(db: Queryable, agentId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE agents SET lost_at = NULL WHERE id = $1 AND lost_at IS NOT NULL',
    [agentId],
  );
  return (rowCount ?? 0) > 0;
}

/** Mark a donor leaving (idempotent); false when there is no such unrevoked agent. */
export async function markLeaving(db: Queryable, agentId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE agents SET leaving_at = coalesce(leaving_at, now())
     WHERE id = $1 AND revoked_at IS NULL`,
    [agentId],
  );
  return (rowCount ?? 0) > 0;
}

/** Durations of the most recent `limit` outages (milliseconds). */
export async function recentOutages(db: Queryable, limit = 500): Promise<number[]> {
  const { rows } = await db.query<{ d: string }>(
    'SELECT duration_ms AS d FROM donor_outages ORDER BY ended_at DESC LIMIT $1',
    [limit],
  );
  return rows.map((r) => Number(r.d));
}
