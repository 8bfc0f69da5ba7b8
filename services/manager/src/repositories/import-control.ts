import type { PlacementPolicy } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import { linkCutsToImport } from './evictions.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The user id in a principal (`principalOf`), or null for anything else ('anonymous').
 *
 * @example userIdOf('0b9e…-…') === '0b9e…-…'; userIdOf('anonymous') === null
 */
export function userIdOf(principal: string): string | null {
  return UUID.test(principal) ? principal : null;
}

/**
 * Remember who started an import (cancel and retry are theirs or an admin's), and name the new
 * dataset on the cuts eviction made for it before it existed.
 */
export async function recordStarter(
  db: Queryable,
  datasetId: string,
  path: string,
  userId: string | null,
): Promise<void> {
  if (userId) {
    await db.query(
      `UPDATE datasets SET created_by = u.id FROM users u WHERE datasets.id = $1 AND u.id = $2`,
      [datasetId, userId],
    );
  }
  await linkCutsToImport(db, datasetId, path, userId);
}

/** What cancel and retry need to know of a dataset. */
export interface ImportControlRow {
  id: string;
  path: string;
  state: string;
  sourceUri: string | null;
  sizeBytes: number;
  error: string | null;
  createdBy: string | null;
  /** The owner (permissions.ts); a retry keeps it. */
  ownerId: string | null;
  policy: PlacementPolicy | null;
  /** Copies wanted, and the availability target they came from (null: asked as a count). */
  replicas: number;
  availabilityTarget: number | null;
}

const SELECT_CONTROL = `SELECT d.id, d.state, d.source_uri, d.size_bytes, d.error, d.created_by,
    d.owner_id,
    d.placement_policy, d.replicas, d.availability_target,
    CASE WHEN f.path = '' THEN d.name ELSE f.path || '/' || d.name END AS path
  FROM datasets d CROSS JOIN LATERAL folder_path(d.folder_id) AS f(path) WHERE d.id = $1`;

interface ControlRow {
  id: string;
  path: string;
  state: string;
  source_uri: string | null;
  size_bytes: number;
  error: string | null;
  created_by: string | null;
  owner_id: string | null;
  placement_policy: PlacementPolicy | null;
  replicas: number;
  availability_target: number | null;
}

const toControl = (r: ControlRow): ImportControlRow => ({
  id: r.id,
  path: r.path,
  state: r.state,
  sourceUri: r.source_uri,
  sizeBytes: Number(r.size_bytes),
  error: r.error,
  createdBy: r.created_by,
  ownerId: r.owner_id,
  policy: r.placement_policy,
  replicas: r.replicas,
  availabilityTarget: r.availability_target,
});

/** A dataset's state, path, source and starter; `lock` takes its row lock (in a transaction). */
export async function importControlRow(
  db: Queryable,
  datasetId: string,
  lock = false,
): Promise<ImportControlRow | null> {
  const { rows } = await db.query<ControlRow>(
    `${SELECT_CONTROL}${lock ? ' FOR UPDATE OF d' : ''}`,
    [datasetId],
  );
  return rows[0] ? toControl(rows[0]) : null;
}

/** Ids of a dataset's failed jobs, with those of its earlier attempts (retries). */
export async function failedJobsOf(db: Queryable, datasetId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM jobs WHERE dataset_id = $1 AND state = 'failed'
     UNION SELECT unnest(earlier_failures) FROM datasets WHERE id = $1`,
    [datasetId],
  );
  return rows.map((r) => r.id);
}

/** Drop a failed dataset's row (its jobs keep their rows, detached; delete jobs still run). */
export async function removeFailedDataset(db: Queryable, datasetId: string): Promise<void> {
  await db.query(`DELETE FROM datasets WHERE id = $1 AND state = 'failed'`, [datasetId]);
}

/** Carry the failed jobs of earlier attempts over to a retry's dataset (its failed attempts). */
export async function carryFailures(db: Queryable, jobIds: string[], datasetId: string) {
  await db.query(
    `UPDATE datasets SET earlier_failures = earlier_failures || $1::uuid[] WHERE id = $2`,
    [jobIds, datasetId],
  );
}

/** Mark a dataset failed with `error`, owned by `createdBy` (a retry that could not start). */
export async function markFailed(
  db: Queryable,
  datasetId: string,
  error: string,
  createdBy: string | null,
): Promise<void> {
  await db.query(
    `UPDATE datasets SET state = 'failed', error = $2, cached_bytes = 0, created_by = $3
     WHERE id = $1`,
    [datasetId, error, createdBy],
  );
}
