import type { Extent } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';

/** A prefix extension in flight, as `datasets.extension` holds it. */
export interface ExtensionRecord {
  /** The cached part when it started (whole morsels): readers keep using it. */
  fromBytes: number;
  /** The cached part once it commits. */
  toBytes: number;
  /** Placement of the new morsels [fromBytes, toBytes) only. */
  extents: Extent[];
  startedAt: string;
}

/** A dataset as the extension decision reads it; `busy` when any of its jobs is unfinished. */
export interface ExtensionDatasetRow {
  id: string;
  state: string;
  source_uri: string | null;
  size_bytes: number;
  morsel_size: number;
  cached_bytes: number;
  etag: string | null;
  last_modified: string | null;
  pinned: boolean;
  read_score: number;
  extension: ExtensionRecord | null;
  busy: boolean;
  /** Copies of each morsel wanted (an extension places as many). */
  replicas: number;
}

/** A dataset with what the extension decision needs, or undefined when it is gone. */
export async function extensionDataset(
  db: Queryable,
  datasetId: string,
): Promise<ExtensionDatasetRow | undefined> {
  const { rows } = await db.query<ExtensionDatasetRow>(
    `SELECT d.id, d.state, d.source_uri, d.size_bytes, d.morsel_size, d.cached_bytes, d.etag,
            d.last_modified, d.pinned, d.read_score, d.extension, d.replicas,
            EXISTS (SELECT 1 FROM jobs j WHERE j.dataset_id = d.id
                    AND j.state IN ('queued', 'running')) AS busy
     FROM datasets d WHERE d.id = $1`,
    [datasetId],
  );
  return rows[0];
}

/** How many datasets have an extension in flight. */
export async function extensionsInFlight(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM datasets WHERE extension IS NOT NULL',
  );
  return rows[0]!.n;
}

/**
 * Lock a dataset's row and tell whether it is still as an extension from `fromBytes` was
 * decided: ready, cached up to there, and with no extension in flight.
 */
export async function lockUnchangedForExtension(
  tx: Queryable,
  datasetId: string,
  fromBytes: number,
): Promise<boolean> {
  const { rows } = await tx.query<{ ok: boolean }>(
    `SELECT state = 'ready' AND cached_bytes = $2 AND extension IS NULL AS ok
     FROM datasets WHERE id = $1 FOR UPDATE`,
    [datasetId, fromBytes],
  );
  return !!rows[0]?.ok;
}

/** Record the extension in flight on its dataset. */
export async function setExtension(
  tx: Queryable,
  datasetId: string,
  ext: ExtensionRecord,
): Promise<void> {
  await tx.query('UPDATE datasets SET extension = $2 WHERE id = $1', [
    datasetId,
    JSON.stringify(ext),
  ]);
}

/** Release a dataset's active reservations (they never reached used space). */
export async function releaseActiveReservations(db: Queryable, datasetId: string): Promise<void> {
  await db.query(
    `UPDATE reservations SET state = 'released', updated_at = now()
     WHERE dataset_id = $1 AND state = 'active'`,
    [datasetId],
  );
}

/** Lock a dataset's row and read its extension in flight and morsel size. */
export async function lockExtension(
  tx: Queryable,
  datasetId: string,
): Promise<{ extension: ExtensionRecord | null; morsel_size: number } | undefined> {
  const { rows } = await tx.query<{ extension: ExtensionRecord | null; morsel_size: number }>(
    'SELECT extension, morsel_size FROM datasets WHERE id = $1 FOR UPDATE',
    [datasetId],
  );
  return rows[0];
}

/** Cancel a dataset's queued and running import jobs. */
export async function cancelUnfinishedImports(tx: Queryable, datasetId: string): Promise<void> {
  await tx.query(
    `UPDATE jobs SET state = 'cancelled', rate = 0, updated_at = now()
     WHERE dataset_id = $1 AND kind = 'import' AND state IN ('queued', 'running')`,
    [datasetId],
  );
}

/** Those of `agentIds` not revoked, in id order. */
export async function unrevokedAgents(
  db: Queryable,
  agentIds: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM agents WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL ORDER BY id',
    [agentIds],
  );
  return rows.map((r) => r.id);
}

/** Drop a dataset's extension in flight and start its read score again from zero. */
export async function clearExtension(tx: Queryable, datasetId: string): Promise<void> {
  await tx.query('UPDATE datasets SET extension = NULL, read_score = 0 WHERE id = $1', [datasetId]);
}

/** Lock a dataset's row and read what committing its extension checks. */
export async function lockForExtensionCommit(
  tx: Queryable,
  datasetId: string,
): Promise<
  | {
      state: string;
      size_bytes: number;
      morsel_size: number;
      cached_bytes: number;
      extension: ExtensionRecord | null;
    }
  | undefined
> {
  const { rows } = await tx.query<{
    state: string;
    size_bytes: number;
    morsel_size: number;
    cached_bytes: number;
    extension: ExtensionRecord | null;
  }>(
    `SELECT state, size_bytes, morsel_size, cached_bytes, extension FROM datasets
     WHERE id = $1 FOR UPDATE`,
    [datasetId],
  );
  return rows[0];
}

/** How many of a dataset's active reservations have lapsed. */
export async function lapsedReservations(tx: Queryable, datasetId: string): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM reservations
     WHERE dataset_id = $1 AND state = 'active' AND expires_at <= now()`,
    [datasetId],
  );
  return rows[0]!.n;
}

/**
 * The extension is readable: the dataset is cached up to `toBytes`, has no extension in flight,
 * and an import of it caches the whole dataset once that covers it.
 */
export async function commitExtensionBytes(
  tx: Queryable,
  datasetId: string,
  toBytes: number,
): Promise<void> {
  await tx.query(
    `UPDATE datasets SET cached_bytes = $2, extension = NULL,
       import_cache_bytes = CASE WHEN $2 >= size_bytes THEN NULL ELSE $2 END
     WHERE id = $1`,
    [datasetId, toBytes],
  );
}

/** Log a committed extension beside trims and evictions. */
export async function recordExtension(
  tx: Queryable,
  datasetId: string,
  bytes: number,
): Promise<void> {
  await tx.query(
    `INSERT INTO cache_evictions (dataset_id, kind, bytes) VALUES ($1, 'extend', $2)`,
    [datasetId, bytes],
  );
}

/** Datasets with an extension in flight that `agentId` has an unfinished import job for. */
export async function extendingDatasetsOfDonor(db: Queryable, agentId: string): Promise<string[]> {
  const { rows } = await db.query<{ dataset_id: string }>(
    `SELECT DISTINCT j.dataset_id FROM jobs j JOIN datasets d ON d.id = j.dataset_id
     WHERE j.kind = 'import' AND j.state IN ('queued', 'running') AND j.agent_id = $1
       AND d.extension IS NOT NULL`,
    [agentId],
  );
  return rows.map((r) => r.dataset_id);
}
