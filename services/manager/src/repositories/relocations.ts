import type { Queryable } from '../db/pool.js';

/**
 * Set an agent's quota and measure what it holds beyond it: used + active reservations − bytes
 * already being relocated − the new quota. `excess` is null for a bandwidth-only agent (no
 * quota was set); no row when there is no such agent.
 */
export async function setQuotaMeasuringExcess(
  db: Queryable,
  agentId: string,
  quotaBytes: number,
  quotaVersion = 0,
): Promise<{ excess: string | null } | undefined> {
  const { rows } = await db.query<{ excess: string | null }>(
    `WITH a AS (UPDATE agents SET quota_bytes = $2, quota_version = greatest(quota_version, $3)
                WHERE id = $1 AND NOT bandwidth_only
                RETURNING used_bytes)
     SELECT (SELECT used_bytes FROM a)
          + coalesce((SELECT sum(bytes) FROM reservations WHERE agent_id = $1
                      AND state = 'active' AND expires_at > now()), 0)
          - coalesce((SELECT sum(total_bytes) FROM jobs WHERE agent_id = $1
                      AND kind = 'relocate' AND state IN ('queued', 'running')), 0)
          - $2 AS excess`,
    [agentId, quotaBytes, quotaVersion],
  );
  return rows[0];
}

/** A ready dataset with morsels on the agent being relieved. */
export interface RelocatableRow {
  id: string;
  morsel_size: number;
  source_uri: string;
}

/** Ready datasets with morsels on `agentId` and no relocation of theirs under way. */
export async function relocatableDatasets(
  db: Queryable,
  agentId: string,
): Promise<RelocatableRow[]> {
  const { rows } = await db.query<RelocatableRow>(
    `SELECT d.id, d.morsel_size, d.source_uri FROM datasets d
     WHERE d.state = 'ready'
       AND EXISTS (SELECT 1 FROM placement_extents e
                   WHERE e.dataset_id = d.id AND $1::uuid = ANY(e.donors))
       AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.dataset_id = d.id AND j.kind = 'relocate'
                       AND j.state IN ('queued', 'running'))`,
    [agentId],
  );
  return rows;
}

/** Bytes of `datasetId` committed on `agentId` (what evicting it there gives back). */
export async function committedBytesOn(
  db: Queryable,
  agentId: string,
  datasetId: string,
): Promise<number> {
  const { rows } = await db.query<{ bytes: string }>(
    `SELECT coalesce(sum(bytes), 0) AS bytes FROM reservations
     WHERE agent_id = $1 AND dataset_id = $2 AND state = 'committed'`,
    [agentId, datasetId],
  );
  return Number(rows[0]?.bytes ?? 0);
}

/** A job row as the relocation commit reads it (payload and result are the job's JSON). */
export interface RelocateJobRow<P, R> {
  kind: string;
  state: string;
  agent_id: string | null;
  dataset_id: string | null;
  payload: P;
  result: R | null;
}

/** The job row, locked until the caller's transaction ends when `lock`. */
export async function relocateJobRow<P, R>(
  db: Queryable,
  jobId: string,
  lock: boolean,
): Promise<RelocateJobRow<P, R> | undefined> {
  const { rows } = await db.query<RelocateJobRow<P, R>>(
    lock
      ? 'SELECT kind, state, agent_id, dataset_id, payload, result FROM jobs WHERE id = $1 FOR UPDATE'
      : 'SELECT kind, state, agent_id, dataset_id, payload, result FROM jobs WHERE id = $1',
    [jobId],
  );
  return rows[0];
}

/** Store a job's result (the commit's answer, so a retried commit gets the same). */
export async function setJobResult(db: Queryable, jobId: string, result: unknown): Promise<void> {
  await db.query('UPDATE jobs SET result = $2, updated_at = now() WHERE id = $1', [jobId, result]);
}

/** The ledger side of a relocation: who gave, the targets' reservations and their bytes. */
export interface LedgerMove {
  from: string;
  reservations: Record<string, string>;
  bytesPerTarget: Record<string, number>;
}

/**
 * Targets' reservations become used bytes; the old donor's committed reservations of the
 * dataset shrink by as much. Agent rows are locked first, in id order, as `reserve` does.
 * Runs on the caller's transaction; returns the bytes moved.
 */
export async function moveLedger(tx: Queryable, datasetId: string, p: LedgerMove): Promise<number> {
  await lockAgentRows(tx, [p.from, ...Object.keys(p.reservations)]);
  let moved = 0;
  for (const [to, reservationId] of Object.entries(p.reservations)) {
    // Committed even if it lapsed meanwhile: the bytes are on the target now.
    const { rows } = await tx.query<{ bytes: string }>(
      `UPDATE reservations SET state = 'committed', updated_at = now()
       WHERE id = $1 AND agent_id = $2 AND state IN ('active', 'expired') RETURNING bytes`,
      [reservationId, to],
    );
    const bytes = Number(rows[0]?.bytes ?? 0);
    await tx.query('UPDATE agents SET used_bytes = used_bytes + $2 WHERE id = $1', [to, bytes]);
    moved += p.bytesPerTarget[to] ?? bytes;
  }
  await releaseCommitted(tx, datasetId, p.from, moved);
  return moved;
}

/**
 * The giving donor's side of a ledger move: its committed reservations of the dataset shrink by
 * `bytes` (largest first) and so does its used space. Runs on the caller's transaction, which
 * has locked the donor's agent row.
 */
export async function releaseCommitted(
  tx: Queryable,
  datasetId: string,
  from: string,
  bytes: number,
): Promise<void> {
  const { rows: held } = await tx.query<{ id: string; bytes: string }>(
    `SELECT id, bytes FROM reservations
     WHERE agent_id = $1 AND dataset_id = $2 AND state = 'committed'
     ORDER BY bytes DESC FOR UPDATE`,
    [from, datasetId],
  );
  let left = bytes;
  for (const r of held) {
    if (left <= 0) break;
    const take = Math.min(Number(r.bytes), left);
    if (take === Number(r.bytes)) {
      await tx.query(
        `UPDATE reservations SET state = 'released', updated_at = now() WHERE id = $1`,
        [r.id],
      );
    } else {
      await tx.query(
        'UPDATE reservations SET bytes = bytes - $2, updated_at = now() WHERE id = $1',
        [r.id, take],
      );
    }
    left -= take;
  }
  await tx.query('UPDATE agents SET used_bytes = greatest(0, used_bytes - $2) WHERE id = $1', [
    from,
    bytes - left,
  ]);
}

/** Lock agent rows in id order (as `reserve` does, so ledger writers never deadlock). */
export async function lockAgentRows(tx: Queryable, ids: readonly string[]): Promise<void> {
  await tx.query('SELECT 1 FROM agents WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [
    [...new Set(ids)],
  ]);
}
