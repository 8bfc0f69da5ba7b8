import type { EvictionLogEntry, EvictionReason } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import { iso } from './rows.js';

/**
 * What made the cache cut a dataset: an import that needed room (its target path and user;
 * the dataset id once it exists), the watermark sweep, an admin, or a quota cut.
 */
export interface EvictionCause {
  reason: EvictionReason;
  forDatasetId?: string | null;
  forPath?: string | null;
  forUserId?: string | null;
}

/**
 * Record one trim or eviction of `datasetId` with its cause (none: a caller from before causes
 * were recorded). The dataset's path is copied so the log still names it after it is deleted.
 *
 * @example await recordCut(tx, { datasetId, kind: 'evict', bytes: 4 << 20 }, { reason: 'watermark' })
 */
export async function recordCut(
  db: Queryable,
  cut: { datasetId: string; kind: 'trim' | 'evict'; bytes: number },
  cause?: EvictionCause,
): Promise<void> {
  await db.query(
    `INSERT INTO cache_evictions
       (dataset_id, kind, bytes, reason, for_dataset_id, for_path, for_user_id, dataset_path)
     SELECT $1, $2, $3, $4, $5, $6, $7,
            (SELECT CASE WHEN f.path = '' THEN d.name ELSE f.path || '/' || d.name END
             FROM datasets d CROSS JOIN LATERAL folder_path(d.folder_id) AS f(path)
             WHERE d.id = $1)`,
    [
      cut.datasetId,
      cut.kind,
      cut.bytes,
      cause?.reason ?? null,
      cause?.forDatasetId ?? null,
      cause?.forPath ?? null,
      cause?.forUserId ?? null,
    ],
  );
}

/**
 * An import's cuts were recorded before its dataset existed (eviction makes room first):
 * name the dataset on the recent cuts made for its path and user.
 */
export async function linkCutsToImport(
  db: Queryable,
  datasetId: string,
  forPath: string,
  forUserId: string | null,
): Promise<void> {
  await db.query(
    `UPDATE cache_evictions SET for_dataset_id = $1
     WHERE reason = 'import' AND for_dataset_id IS NULL AND for_path = $2
       AND for_user_id IS NOT DISTINCT FROM $3 AND at > now() - interval '1 hour'`,
    [datasetId, forPath, forUserId],
  );
}

interface LogRow {
  id: string;
  kind: EvictionLogEntry['kind'];
  dataset_id: string | null;
  dataset_path: string | null;
  bytes: number;
  at: Date;
  reason: EvictionReason | null;
  for_dataset_id: string | null;
  for_path: string | null;
  for_user_id: string | null;
  for_user_name: string | null;
}

/** The most recent trims, evictions and extensions, newest first, with their causes. */
export async function evictionLog(db: Queryable, limit = 100): Promise<EvictionLogEntry[]> {
  const { rows } = await db.query<LogRow>(
    `SELECT e.id, e.kind, e.dataset_id, e.bytes, e.at, e.reason, e.for_dataset_id, e.for_path,
            e.for_user_id, u.username AS for_user_name,
            coalesce(e.dataset_path, (
              SELECT CASE WHEN f.path = '' THEN d.name ELSE f.path || '/' || d.name END
              FROM datasets d CROSS JOIN LATERAL folder_path(d.folder_id) AS f(path)
              WHERE d.id = e.dataset_id)) AS dataset_path
     FROM cache_evictions e LEFT JOIN users u ON u.id = e.for_user_id
     ORDER BY e.at DESC, e.id DESC LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    kind: r.kind,
    datasetId: r.dataset_id,
    datasetPath: r.dataset_path,
    bytes: Number(r.bytes),
    at: iso(r.at),
    reason: r.reason,
    forDatasetId: r.for_dataset_id,
    forPath: r.for_path,
    forUserId: r.for_user_id,
    forUserName: r.for_user_name,
  }));
}
