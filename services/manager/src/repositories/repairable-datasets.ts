/** Datasets that may need repair and their fault rows, as the repair scan reads them. */
import type { Queryable } from '../db/pool.js';

/** A ready dataset that may need repair, with what a repair job needs to know of it. */
export interface RepairableDataset {
  id: string;
  sizeBytes: number;
  /** Bytes of the cached prefix (all of it unless prefix caching cut it): what copies cover. */
  cachedBytes: number;
  morselSize: number;
  replicas: number;
  sourceUri: string | null;
  etag: string | null;
  lastModified: string | null;
}

/**
 * Ready datasets with a copy on one of `departing`, a fault row, or fewer complete copies than
 * `replicas` (a copy is complete when its extents cover every morsel).
 */
export async function repairableDatasets(
  db: Queryable,
  departing: readonly string[],
): Promise<RepairableDataset[]> {
  const { rows } = await db.query<{
    id: string;
    size_bytes: string;
    cached_bytes: string;
    morsel_size: number;
    replicas: number;
    source_uri: string | null;
    etag: string | null;
    last_modified: string | null;
  }>(
    `SELECT d.id, d.size_bytes, d.cached_bytes, d.morsel_size, d.replicas, d.source_uri, d.etag, d.last_modified
     FROM datasets d
     WHERE d.state = 'ready' AND d.cached_bytes > 0 AND (
       EXISTS (SELECT 1 FROM placement_extents e
               WHERE e.dataset_id = d.id AND e.donors && $1::uuid[])
       OR EXISTS (SELECT 1 FROM morsel_faults f WHERE f.dataset_id = d.id)
       OR d.replicas > (SELECT count(*) FROM (
            SELECT copy FROM placement_extents e WHERE e.dataset_id = d.id GROUP BY copy
            HAVING sum(e.count) >= ceil(d.cached_bytes::numeric / d.morsel_size)) c))`,
    [departing],
  );
  return rows.map((r) => ({
    id: r.id,
    sizeBytes: Number(r.size_bytes),
    cachedBytes: Number(r.cached_bytes),
    morselSize: r.morsel_size,
    replicas: r.replicas,
    sourceUri: r.source_uri,
    etag: r.etag,
    lastModified: r.last_modified,
  }));
}
