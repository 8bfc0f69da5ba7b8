import type { Queryable } from '../db/pool.js';

/** A storage donor's ledger row as placement sees it. */
export interface DonorSpaceRow {
  id: string;
  url: string;
  /** quota − used − active reservations, in bytes (may be negative). */
  free: string;
}

/**
 * Enrolled, unrevoked storage donors that are neither lost nor leaving with their free space by the ledger: the pool placement
 * draws from (liveness is soft state, filtered by the caller).
 */
export async function storageDonorSpace(db: Queryable): Promise<DonorSpaceRow[]> {
  const { rows } = await db.query<DonorSpaceRow>(
    `SELECT a.id, a.url,
            a.quota_bytes - a.used_bytes - coalesce(r.bytes, 0) AS free
     FROM agents a
     LEFT JOIN (SELECT agent_id, sum(bytes)::bigint AS bytes FROM reservations
                WHERE state = 'active' AND expires_at > now() GROUP BY agent_id) r
       ON r.agent_id = a.id
     WHERE a.revoked_at IS NULL AND NOT a.bandwidth_only
       AND a.lost_at IS NULL AND a.leaving_at IS NULL`,
  );
  return rows;
}
