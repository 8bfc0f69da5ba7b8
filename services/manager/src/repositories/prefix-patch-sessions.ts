import type { PatchNode, PatchSessionView } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';

/** One row of `patch_sessions`. */
export interface PatchSessionRow {
  id: string;
  dataset_id: string | null;
  client: string;
  state: PatchSessionView['state'];
  first_morsel: number;
  end_morsel: number;
  request_size: number;
  nodes: PatchNode[];
  source: string | null;
  reports: number;
  bytes: number;
  rate: number | null;
  created_at: Date;
}

/** One patch session, or undefined when there is none with this id. */
export async function getPatchSession(
  db: Queryable,
  id: string,
): Promise<PatchSessionRow | undefined> {
  const { rows } = await db.query<PatchSessionRow>('SELECT * FROM patch_sessions WHERE id = $1', [
    id,
  ]);
  return rows[0];
}

/** Mark a dataset's active session replaced (a reader opened a new one instead). */
export async function replacePatchSession(
  db: Queryable,
  id: string,
  datasetId: string,
): Promise<void> {
  await db.query(
    `UPDATE patch_sessions SET state = 'replaced', updated_at = now()
     WHERE id = $1 AND dataset_id = $2 AND state = 'active'`,
    [id, datasetId],
  );
}

/** Open a session patching morsels [first, end) of a dataset for `client`. */
export async function insertPatchSession(
  db: Queryable,
  s: {
    datasetId: string;
    client: string;
    first: number;
    end: number;
    requestSize: number;
    nodes: readonly PatchNode[];
    source: string | null;
  },
): Promise<PatchSessionRow> {
  const { rows } = await db.query<PatchSessionRow>(
    `INSERT INTO patch_sessions (dataset_id, client, first_morsel, end_morsel, request_size,
                                 nodes, source)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [s.datasetId, s.client, s.first, s.end, s.requestSize, JSON.stringify(s.nodes), s.source],
  );
  return rows[0]!;
}

/**
 * Add one node's report to its session: bytes add up, positive node rates add up (the nodes
 * download concurrently), and the session is done once every node reported.
 */
export async function addPatchReport(
  db: Queryable,
  id: string,
  bytes: number,
  nodeRate: number,
): Promise<PatchSessionRow> {
  const { rows } = await db.query<PatchSessionRow>(
    `UPDATE patch_sessions SET reports = reports + 1, bytes = bytes + $2,
       rate = CASE WHEN $3::float8 > 0 THEN coalesce(rate, 0) + $3::float8 ELSE rate END,
       state = CASE WHEN state = 'active' AND reports + 1 >= jsonb_array_length(nodes)
                    THEN 'done' ELSE state END,
       updated_at = now()
     WHERE id = $1 RETURNING *`,
    [id, bytes, nodeRate],
  );
  return rows[0]!;
}

/** The most recent sessions, newest first. */
export async function listPatchSessions(db: Queryable, limit: number): Promise<PatchSessionRow[]> {
  const { rows } = await db.query<PatchSessionRow>(
    'SELECT * FROM patch_sessions ORDER BY created_at DESC LIMIT $1',
    [limit],
  );
  return rows;
}
