/** Destination space for repair jobs: reserved per job, committed per unit. */
import { randomUUID } from 'node:crypto';
import { formatSize, FreeLoaderError } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import { sweepExpiredReservations } from './reservations.js';

/**
 * Reserve room on a repair job's destination for each of its units, in the caller's transaction:
 * the agent row is locked, its lapsed reservations swept, the units' total checked against its
 * free space once, and one reservation per unit inserted by one statement (so each unit still
 * commits alone). Reserving per unit cost a transaction each: ~110 for the repair benchmark's
 * first pass. Returns the ids in `bytes` order; NO_SPACE or AGENT_NOT_FOUND reserves nothing.
 */
export async function reserveRepairUnits(
  tx: Queryable,
  req: { agentId: string; datasetId: string; bytes: readonly number[]; ttlSeconds: number },
): Promise<string[]> {
  const { rows } = await tx.query<{ free: string; bandwidth_only: boolean }>(
    `SELECT quota_bytes - used_bytes AS free, bandwidth_only FROM agents
     WHERE id = $1 AND revoked_at IS NULL FOR UPDATE`,
    [req.agentId],
  );
  const agent = rows[0];
  if (!agent) throw new FreeLoaderError('AGENT_NOT_FOUND', `no agent ${req.agentId}`);
  await sweepExpiredReservations(tx, req.agentId);
  const held = await tx.query<{ bytes: string }>(
    `SELECT coalesce(sum(bytes), 0)::bigint AS bytes FROM reservations
     WHERE agent_id = $1 AND state = 'active'`,
    [req.agentId],
  );
  const free = agent.bandwidth_only ? 0 : Number(agent.free) - Number(held.rows[0]!.bytes);
  const total = req.bytes.reduce((s, b) => s + b, 0);
  if (free < total) {
    throw new FreeLoaderError(
      'NO_SPACE',
      `agent cannot hold ${formatSize(total)} (${formatSize(Math.max(0, free))} free)`,
      { freeBytes: Math.max(0, free) },
    );
  }
  const ids = req.bytes.map(() => randomUUID());
  await tx.query(
    `INSERT INTO reservations (id, agent_id, dataset_id, bytes, expires_at)
     SELECT x.id, $2, $3, x.bytes, now() + make_interval(secs => $4)
     FROM unnest($1::uuid[], $5::bigint[]) AS x(id, bytes)`,
    [ids, req.agentId, req.datasetId, req.ttlSeconds, req.bytes],
  );
  return ids;
}

/**
 * A destination's reservations become used space (committed even if they lapsed meanwhile: the
 * bytes are on it now), two statements for any number. Returns the bytes committed.
 */
export async function commitReservations(
  tx: Queryable,
  agentId: string,
  reservationIds: readonly string[],
): Promise<number> {
  if (reservationIds.length === 0) return 0;
  const { rows } = await tx.query<{ bytes: string | null }>(
    `WITH c AS (UPDATE reservations SET state = 'committed', updated_at = now()
                WHERE id = ANY($1::uuid[]) AND agent_id = $2 AND state IN ('active', 'expired')
                RETURNING bytes)
     SELECT sum(bytes)::bigint AS bytes FROM c`,
    [reservationIds, agentId],
  );
  const bytes = Number(rows[0]?.bytes ?? 0);
  await tx.query('UPDATE agents SET used_bytes = used_bytes + $2 WHERE id = $1', [agentId, bytes]);
  return bytes;
}
