import type { Queryable } from '../db/pool.js';

/** What a trim needs to know of a dataset, read under its row lock. */
export interface TrimDatasetRow {
  size_bytes: number;
  morsel_size: number;
  cached_bytes: number;
  state: string;
  pinned: boolean;
}

/** Lock a dataset's row for a trim (inside the caller's transaction) and read its sizes. */
export async function lockDatasetForTrim(
  tx: Queryable,
  datasetId: string,
): Promise<TrimDatasetRow | undefined> {
  const { rows } = await tx.query<TrimDatasetRow>(
    `SELECT size_bytes, morsel_size, cached_bytes, state, pinned FROM datasets
     WHERE id = $1 FOR UPDATE`,
    [datasetId],
  );
  return rows[0];
}

/** Lock agents' rows in id order (as `reserve` locks an agent before any of its reservations). */
export async function lockAgents(tx: Queryable, agentIds: readonly string[]): Promise<void> {
  await tx.query('SELECT 1 FROM agents WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [
    agentIds,
  ]);
}

/** A donor's committed reservations for a dataset, smallest first, locked. */
export async function lockCommittedReservations(
  tx: Queryable,
  agentId: string,
  datasetId: string,
): Promise<{ id: string; bytes: number }[]> {
  const { rows } = await tx.query<{ id: string; bytes: number }>(
    `SELECT id, bytes FROM reservations
     WHERE agent_id = $1 AND dataset_id = $2 AND state = 'committed' ORDER BY bytes FOR UPDATE`,
    [agentId, datasetId],
  );
  return rows;
}

/** Release one reservation whole. */
export async function releaseReservation(tx: Queryable, reservationId: string): Promise<void> {
  await tx.query(`UPDATE reservations SET state = 'released', updated_at = now() WHERE id = $1`, [
    reservationId,
  ]);
}

/** Take `bytes` out of one reservation. */
export async function shrinkReservation(
  tx: Queryable,
  reservationId: string,
  bytes: number,
): Promise<void> {
  await tx.query('UPDATE reservations SET bytes = bytes - $2, updated_at = now() WHERE id = $1', [
    reservationId,
    bytes,
  ]);
}

/** Give `bytes` of an agent's used space back (never below zero). */
export async function decreaseUsedBytes(
  tx: Queryable,
  agentId: string,
  bytes: number,
): Promise<void> {
  await tx.query('UPDATE agents SET used_bytes = greatest(0, used_bytes - $2) WHERE id = $1', [
    agentId,
    bytes,
  ]);
}

/** Set how much of a dataset is cached. */
export async function setCachedBytes(
  tx: Queryable,
  datasetId: string,
  cachedBytes: number,
): Promise<void> {
  await tx.query('UPDATE datasets SET cached_bytes = $2 WHERE id = $1', [datasetId, cachedBytes]);
}
