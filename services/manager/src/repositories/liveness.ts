import type pg from 'pg';
import type { Heartbeat } from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';

/** One sighting a manager received, as written to the shared liveness table. */
export interface Sighting {
  agentId: string;
  /** Milliseconds between the sighting and now (the write turns it into database time). */
  ageMs: number;
  heartbeat: Heartbeat | undefined;
}

/** A silence past the stale threshold that a sighting on this manager ended. */
export interface OutageClaim {
  agentId: string;
  silentMs: number;
  /**
   * The liveness version this manager knew when the silence ended (null: no row yet). The
   * outage is recorded only if the row is still at that version: had another manager written
   * a sighting since, the silence was not one (or that manager records it).
   */
  knownVersion: number | null;
}

/** A row of the shared liveness table, its age on the database's clock. */
export interface SharedSighting {
  agentId: string;
  ageMs: number;
  heartbeat: Heartbeat | null;
  version: number;
}

/**
 * Write a manager's batch in one transaction: first the outages it saw end (each checked
 * against the row's version under a row lock, so of two managers that both saw one silence end
 * exactly one records it; lost, revoked and bandwidth-only donors' silences are not transient
 * outages), then one multi-row UPSERT of the sightings. Returns the new version of each agent
 * written. Rows are locked in agent id order so two managers' batches cannot deadlock.
 */
export async function writeSightings(
  pool: pg.Pool,
  sightings: readonly Sighting[],
  outages: readonly OutageClaim[],
  writer: string | null = null,
): Promise<Map<string, number>> {
  if (sightings.length === 0 && outages.length === 0) return new Map<string, number>();
  const rows = [...sightings].sort((a, b) => (a.agentId < b.agentId ? -1 : 1));
  return withTransaction(pool, async (tx) => {
    if (outages.length > 0) {
      await tx.query(
        `WITH o AS (
           SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::bigint[]) AS o(id, ms, known)
         ), prev AS (
           SELECT l.agent_id, l.version FROM agent_liveness l
           WHERE l.agent_id = ANY($1::uuid[]) ORDER BY l.agent_id FOR UPDATE
         )
         INSERT INTO donor_outages (agent_id, duration_ms)
         SELECT o.id, o.ms FROM o
         JOIN agents a ON a.id = o.id
         LEFT JOIN prev ON prev.agent_id = o.id
         WHERE a.lost_at IS NULL AND a.revoked_at IS NULL AND NOT a.bandwidth_only
           AND prev.version IS NOT DISTINCT FROM o.known`,
        [
          outages.map((o) => o.agentId),
          outages.map((o) => Math.round(o.silentMs)),
          outages.map((o) => o.knownVersion),
        ],
      );
    }
    if (rows.length === 0) return new Map<string, number>();
    const { rows: written } = await tx.query<{ agent_id: string; version: number }>(
      `INSERT INTO agent_liveness AS l (agent_id, seen_at, heartbeat, version, written_by)
       SELECT v.id, now() - v.age_ms * interval '1 millisecond', v.hb,
              nextval('agent_liveness_version'), $4::uuid
       FROM unnest($1::uuid[], $2::float8[], $3::jsonb[]) WITH ORDINALITY AS v(id, age_ms, hb, n)
       JOIN agents a ON a.id = v.id AND a.revoked_at IS NULL
       ORDER BY v.n
       ON CONFLICT (agent_id) DO UPDATE SET
         seen_at = greatest(l.seen_at, EXCLUDED.seen_at),
         heartbeat = CASE WHEN EXCLUDED.seen_at >= l.seen_at
                          THEN coalesce(EXCLUDED.heartbeat, l.heartbeat)
                          ELSE coalesce(l.heartbeat, EXCLUDED.heartbeat) END,
         version = EXCLUDED.version,
         written_by = EXCLUDED.written_by
       RETURNING agent_id, version`,
      [
        rows.map((r) => r.agentId),
        rows.map((r) => Math.max(0, r.ageMs)),
        rows.map((r) => (r.heartbeat ? JSON.stringify(r.heartbeat) : null)),
        writer,
      ],
    );
    return new Map(written.map((w) => [w.agent_id, Number(w.version)]));
  });
}

/**
 * Sightings of unrevoked agents written after version `after` and no older than `withinMs`
 * (older ones cannot make an agent live), with their age on the database's clock; those
 * `exceptWriter` wrote (the reading manager's own) are left out.
 */
export async function readSightings(
  db: pg.Pool,
  after: number,
  withinMs: number,
  exceptWriter: string | null = null,
): Promise<SharedSighting[]> {
  const { rows } = await db.query<{
    agent_id: string;
    age_ms: number;
    heartbeat: Heartbeat | null;
    version: number;
  }>(
    `SELECT l.agent_id, l.heartbeat, l.version,
            extract(epoch FROM now() - l.seen_at) * 1000 AS age_ms
     FROM agent_liveness l JOIN agents a ON a.id = l.agent_id AND a.revoked_at IS NULL
     WHERE l.version > $1 AND l.seen_at > now() - $2 * interval '1 millisecond'
       AND l.written_by IS DISTINCT FROM $3::uuid`,
    [after, withinMs, exceptWriter],
  );
  return rows.map((r) => ({
    agentId: r.agent_id,
    ageMs: Math.max(0, Number(r.age_ms)),
    heartbeat: r.heartbeat,
    version: Number(r.version),
  }));
}
