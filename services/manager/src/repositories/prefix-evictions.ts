import type { Queryable } from '../db/pool.js';

/** A ready dataset as the cache sees it: what is cached, how recently it was read, its pin. */
export interface CachedDatasetRow {
  id: string;
  path: string;
  source_uri: string | null;
  size_bytes: number;
  morsel_size: number;
  cached_bytes: number;
  pinned: boolean;
  last_access_at: Date | null;
  read_count: number;
  extending_to: number | null;
}

/** Every ready dataset with its path, cached part, pin and recency, least recently read first. */
export async function cachedDatasetRows(db: Queryable): Promise<CachedDatasetRow[]> {
  const { rows } = await db.query<CachedDatasetRow>(
    `SELECT d.id, CASE WHEN f.path = '' THEN d.name ELSE f.path || '/' || d.name END AS path,
            d.source_uri, d.size_bytes, d.morsel_size, d.cached_bytes, d.pinned,
            coalesce(d.last_access_at, d.created_at) AS last_access_at,
            d.read_count::int AS read_count, (d.extension->>'toBytes')::bigint AS extending_to
     FROM datasets d CROSS JOIN LATERAL folder_path(d.folder_id) AS f(path)
     WHERE d.state = 'ready'
     ORDER BY coalesce(d.last_access_at, d.created_at), d.id`,
  );
  return rows;
}

/** Donated space of the storage donors (not revoked, not bandwidth-only) and what is in use. */
export async function cacheSpaceOf(
  db: Queryable,
): Promise<{ capacityBytes: number; usedBytes: number }> {
  const { rows } = await db.query<{ capacity: number; used: number }>(
    `SELECT coalesce(sum(a.quota_bytes), 0)::bigint AS capacity,
            coalesce(sum(a.used_bytes), 0)::bigint
              + coalesce((SELECT sum(bytes) FROM reservations
                          WHERE state = 'active' AND expires_at > now()), 0)::bigint AS used
     FROM agents a WHERE a.revoked_at IS NULL AND NOT a.bandwidth_only`,
  );
  return { capacityBytes: rows[0]!.capacity, usedBytes: rows[0]!.used };
}

/** Counts and bytes of trims, evictions and extensions in `cache_evictions`. */
export interface EvictionTotalsRow {
  trims: number;
  trimmed: number;
  evictions: number;
  evicted: number;
  extensions: number;
  extended: number;
  last: Date | null;
}

/** Totals of every trim, eviction and extension so far; `last` ignores extensions. */
export async function evictionTotalsOf(db: Queryable): Promise<EvictionTotalsRow> {
  const { rows } = await db.query<EvictionTotalsRow>(
    `SELECT count(*) FILTER (WHERE kind = 'trim')::int AS trims,
            coalesce(sum(bytes) FILTER (WHERE kind = 'trim'), 0)::bigint AS trimmed,
            count(*) FILTER (WHERE kind = 'evict')::int AS evictions,
            coalesce(sum(bytes) FILTER (WHERE kind = 'evict'), 0)::bigint AS evicted,
            count(*) FILTER (WHERE kind = 'extend')::int AS extensions,
            coalesce(sum(bytes) FILTER (WHERE kind = 'extend'), 0)::bigint AS extended,
            max(at) FILTER (WHERE kind <> 'extend') AS last
     FROM cache_evictions`,
  );
  return rows[0]!;
}

/** How many delete jobs of these datasets are still queued or running. */
export async function pendingDeletes(
  db: Queryable,
  datasetIds: readonly string[],
): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs
     WHERE kind = 'delete' AND dataset_id = ANY($1::uuid[]) AND state IN ('queued', 'running')`,
    [datasetIds],
  );
  return rows[0]!.n;
}

/**
 * Take a transaction-level advisory lock (held until the transaction ends): callers that use the
 * same key are serialised.
 */
export async function advisoryXactLock(tx: Queryable, key: number): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [key]);
}

/** Pin a dataset (eviction never cuts it) or unpin it. False when there is no such dataset. */
export async function setPinned(
  db: Queryable,
  datasetId: string,
  pinned: boolean,
): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE datasets SET pinned = $2 WHERE id = $1', [
    datasetId,
    pinned,
  ]);
  return !!rowCount;
}
