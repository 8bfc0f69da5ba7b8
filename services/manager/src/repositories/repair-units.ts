/** The repair queue (`repair_units`): what the scan wants, what jobs run, what was orphaned. */
import type { Queryable } from '../db/pool.js';

/** A row of the repair queue. */
export interface RepairUnitRow {
  id: string;
  datasetId: string;
  copy: number;
  first: number;
  count: number;
  from: string | null;
  reason: 'lost' | 'leaving' | 'revoked' | 'fault' | 'missing';
  morsels: number[];
  bytes: number;
  liveCopies: number;
  state: 'waiting' | 'running';
  jobId: string | null;
  to: string | null;
  reservationId: string | null;
  enqueuedAt: Date;
}

const UNIT_COLUMNS = `id::text, dataset_id, copy, first, count, from_agent, reason, morsels, bytes,
  live_copies, state, job_id, to_agent, reservation_id, enqueued_at`;

type UnitDbRow = {
  id: string;
  dataset_id: string;
  copy: number;
  first: string;
  count: string;
  from_agent: string | null;
  reason: RepairUnitRow['reason'];
  morsels: string[];
  bytes: string;
  live_copies: number;
  state: RepairUnitRow['state'];
  job_id: string | null;
  to_agent: string | null;
  reservation_id: string | null;
  enqueued_at: Date;
};

const toUnit = (r: UnitDbRow): RepairUnitRow => ({
  id: r.id,
  datasetId: r.dataset_id,
  copy: r.copy,
  first: Number(r.first),
  count: Number(r.count),
  from: r.from_agent,
  reason: r.reason,
  morsels: r.morsels.map(Number),
  bytes: Number(r.bytes),
  liveCopies: r.live_copies,
  state: r.state,
  jobId: r.job_id,
  to: r.to_agent,
  reservationId: r.reservation_id,
  enqueuedAt: r.enqueued_at,
});

/** The whole queue, most dangerous first. */
export async function repairUnits(db: Queryable): Promise<RepairUnitRow[]> {
  const { rows } = await db.query<UnitDbRow>(
    `SELECT ${UNIT_COLUMNS} FROM repair_units ORDER BY live_copies, enqueued_at, id`,
  );
  return rows.map(toUnit);
}

/** These units (those still queued), locked in id order until the caller's transaction ends. */
export async function lockRepairUnits(
  tx: Queryable,
  ids: readonly string[],
): Promise<RepairUnitRow[]> {
  const { rows } = await tx.query<UnitDbRow>(
    `SELECT ${UNIT_COLUMNS} FROM repair_units WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`,
    [ids],
  );
  return rows.map(toUnit);
}

/** A unit the scan wants queued. */
export interface WantedUnit {
  datasetId: string;
  copy: number;
  first: number;
  count: number;
  from: string | null;
  reason: RepairUnitRow['reason'];
  morsels: number[];
  bytes: number;
  liveCopies: number;
}

/**
 * Make the waiting part of the queue what the scan found: waiting units it no longer wants go
 * (their donor came back, the dataset went), new ones are added, kept ones get their danger
 * refreshed. Running units are left alone.
 */
export async function syncWaitingUnits(
  db: Queryable,
  wanted: readonly WantedUnit[],
): Promise<void> {
  const json = JSON.stringify(
    wanted.map((w) => ({
      dataset_id: w.datasetId,
      copy: w.copy,
      first: w.first,
      count: w.count,
      from_agent: w.from,
      reason: w.reason,
      morsels: w.morsels,
      bytes: w.bytes,
      live_copies: w.liveCopies,
    })),
  );
  await db.query(
    `WITH w AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(dataset_id uuid, copy int,
                  first bigint, count bigint, from_agent uuid, reason text, morsels jsonb,
                  bytes bigint, live_copies int))
     DELETE FROM repair_units u WHERE u.state = 'waiting' AND NOT EXISTS (
       SELECT 1 FROM w WHERE w.dataset_id = u.dataset_id AND w.copy = u.copy
         AND w.first = u.first AND w.count = u.count
         AND w.from_agent IS NOT DISTINCT FROM u.from_agent)`,
    [json],
  );
  await db.query(
    `INSERT INTO repair_units (dataset_id, copy, first, count, from_agent, reason, morsels, bytes,
                               live_copies)
     SELECT x.dataset_id, x.copy, x.first, x.count, x.from_agent, x.reason,
            ARRAY(SELECT jsonb_array_elements_text(x.morsels))::bigint[], x.bytes, x.live_copies
     FROM jsonb_to_recordset($1::jsonb) AS x(dataset_id uuid, copy int, first bigint,
            count bigint, from_agent uuid, reason text, morsels jsonb, bytes bigint,
            live_copies int)
     ON CONFLICT (dataset_id, copy, first) DO UPDATE
       SET live_copies = EXCLUDED.live_copies, reason = EXCLUDED.reason
       WHERE repair_units.state = 'waiting'`,
    [json],
  );
}

/**
 * Hand units to a job: running, with their destination and the reservation of each, in one
 * statement (one per unit cost a dispatch of the repair benchmark's ~110 units as many round trips).
 */
export async function markUnitsRunning(
  db: Queryable,
  jobId: string,
  to: string,
  units: ReadonlyArray<{ id: string; reservationId: string }>,
): Promise<void> {
  await db.query(
    `UPDATE repair_units u SET state = 'running', job_id = $1, to_agent = $2,
            reservation_id = x.reservation_id
     FROM unnest($3::bigint[], $4::uuid[]) AS x(id, reservation_id) WHERE u.id = x.id`,
    [jobId, to, units.map((u) => u.id), units.map((u) => u.reservationId)],
  );
}

/**
 * Committed units leave the queue and are logged for the rate: two statements for any number.
 */
export async function finishRepairUnits(
  tx: Queryable,
  units: ReadonlyArray<Pick<RepairUnitRow, 'id' | 'datasetId' | 'bytes'>>,
  to: string,
): Promise<void> {
  if (units.length === 0) return;
  await tx.query('DELETE FROM repair_units WHERE id = ANY($1::bigint[])', [units.map((u) => u.id)]);
  await tx.query(
    `INSERT INTO repair_done (dataset_id, agent_id, bytes)
     SELECT x.dataset_id, $1, x.bytes FROM unnest($2::uuid[], $3::bigint[]) AS x(dataset_id, bytes)`,
    [to, units.map((u) => u.datasetId), units.map((u) => u.bytes)],
  );
}

/**
 * Running units whose job ended (failed, cancelled, or done without committing them) or
 * vanished go back to waiting; returns their reservations for the caller to release.
 */
export async function requeueOrphanedUnits(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ reservation_id: string | null }>(
    `WITH o AS (
       SELECT u.id, u.reservation_id FROM repair_units u LEFT JOIN jobs j ON j.id = u.job_id
       WHERE u.state = 'running' AND (j.id IS NULL OR j.state NOT IN ('queued', 'running'))
       FOR UPDATE OF u SKIP LOCKED)
     UPDATE repair_units u SET state = 'waiting', job_id = NULL, to_agent = NULL,
            reservation_id = NULL
     FROM o WHERE u.id = o.id RETURNING o.reservation_id`,
  );
  return rows.flatMap((r) => (r.reservation_id ? [r.reservation_id] : []));
}
