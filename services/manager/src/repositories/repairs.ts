import type { Extent } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';

/** An agent's failure marks as the repair scheduler reads them. */
export interface FailureMarks {
  id: string;
  url: string;
  lost: boolean;
  leaving: boolean;
  revoked: boolean;
  bandwidthOnly: boolean;
  /** quota − used − active reservations (bytes; may be negative). */
  freeBytes: number;
}

/** Every enrolled agent with its failure marks and free space. */
export async function failureMarks(db: Queryable): Promise<FailureMarks[]> {
  const { rows } = await db.query<{
    id: string;
    url: string;
    lost: boolean;
    leaving: boolean;
    revoked: boolean;
    bandwidth_only: boolean;
    free: string;
  }>(
    `SELECT a.id, a.url, a.lost_at IS NOT NULL AS lost, a.leaving_at IS NOT NULL AS leaving,
            a.revoked_at IS NOT NULL AS revoked, a.bandwidth_only,
            a.quota_bytes - a.used_bytes - coalesce((SELECT sum(r.bytes) FROM reservations r
              WHERE r.agent_id = a.id AND r.state = 'active' AND r.expires_at > now()), 0) AS free
     FROM agents a`,
  );
  return rows.map((r) => ({
    id: r.id,
    url: r.url,
    lost: r.lost,
    leaving: r.leaving,
    revoked: r.revoked,
    bandwidthOnly: r.bandwidth_only,
    freeBytes: Number(r.free),
  }));
}

/** Mark a donor lost (true when it was not already). */
export async function markLost(db: Queryable, agentId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE agents SET lost_at = now() WHERE id = $1 AND lost_at IS NULL AND revoked_at IS NULL',
    [agentId],
  );
  return (rowCount ?? 0) > 0;
}

/** A lost donor heartbeats again: clear the mark (true when it was set). */
export async function clearLost(db: Queryable, agentId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE agents SET lost_at = NULL WHERE id = $1 AND lost_at IS NOT NULL',
    [agentId],
  );
  return (rowCount ?? 0) > 0;
}

/** Mark a donor leaving (idempotent); false when there is no such unrevoked agent. */
export async function markLeaving(db: Queryable, agentId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE agents SET leaving_at = coalesce(leaving_at, now())
     WHERE id = $1 AND revoked_at IS NULL`,
    [agentId],
  );
  return (rowCount ?? 0) > 0;
}

/** Durations of the most recent `limit` outages (milliseconds). */
export async function recentOutages(db: Queryable, limit = 500): Promise<number[]> {
  const { rows } = await db.query<{ d: string }>(
    'SELECT duration_ms AS d FROM donor_outages ORDER BY ended_at DESC LIMIT $1',
    [limit],
  );
  return rows.map((r) => Number(r.d));
}

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

/** Fault rows of a dataset (copies known bad). */
export async function faultsOf(
  db: Queryable,
  datasetId: string,
): Promise<Array<{ copy: number; morsel: number; agentId: string }>> {
  const { rows } = await db.query<{ copy: number; morsel: string; agent_id: string }>(
    'SELECT copy, morsel, agent_id FROM morsel_faults WHERE dataset_id = $1',
    [datasetId],
  );
  return rows.map((r) => ({ copy: r.copy, morsel: Number(r.morsel), agentId: r.agent_id }));
}

/** Drop fault rows of `morsels` of one copy (repaired, or no longer placed there). */
export async function deleteFaults(
  db: Queryable,
  datasetId: string,
  copy: number,
  morsels: readonly number[],
): Promise<void> {
  await db.query(
    'DELETE FROM morsel_faults WHERE dataset_id = $1 AND copy = $2 AND morsel = ANY($3::bigint[])',
    [datasetId, copy, morsels],
  );
}

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

/** One unit, locked until the caller's transaction ends. */
export async function lockRepairUnit(
  tx: Queryable,
  id: string,
): Promise<RepairUnitRow | undefined> {
  const { rows } = await tx.query<UnitDbRow>(
    `SELECT ${UNIT_COLUMNS} FROM repair_units WHERE id = $1 FOR UPDATE`,
    [id],
  );
  return rows[0] ? toUnit(rows[0]) : undefined;
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

/** Hand units to a job: running, with their destination and the reservation of each. */
export async function markUnitsRunning(
  db: Queryable,
  jobId: string,
  to: string,
  units: ReadonlyArray<{ id: string; reservationId: string }>,
): Promise<void> {
  for (const u of units) {
    await db.query(
      `UPDATE repair_units SET state = 'running', job_id = $2, to_agent = $3, reservation_id = $4
       WHERE id = $1`,
      [u.id, jobId, to, u.reservationId],
    );
  }
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

/** A destination's reservation becomes used space (committed even if it lapsed meanwhile). */
export async function commitReservationOf(
  tx: Queryable,
  reservationId: string,
  agentId: string,
): Promise<void> {
  const { rows } = await tx.query<{ bytes: string }>(
    `UPDATE reservations SET state = 'committed', updated_at = now()
     WHERE id = $1 AND agent_id = $2 AND state IN ('active', 'expired') RETURNING bytes`,
    [reservationId, agentId],
  );
  await tx.query('UPDATE agents SET used_bytes = used_bytes + $2 WHERE id = $1', [
    agentId,
    Number(rows[0]?.bytes ?? 0),
  ]);
}

/** A committed unit leaves the queue and is logged for the rate. */
export async function finishRepairUnit(
  tx: Queryable,
  unit: Pick<RepairUnitRow, 'id' | 'datasetId' | 'bytes'>,
  to: string,
): Promise<void> {
  await tx.query('DELETE FROM repair_units WHERE id = $1', [unit.id]);
  await tx.query('INSERT INTO repair_done (dataset_id, agent_id, bytes) VALUES ($1, $2, $3)', [
    unit.datasetId,
    to,
    unit.bytes,
  ]);
}

/** Bytes repaired since `sinceS` seconds ago. */
export async function repairedBytesSince(db: Queryable, sinceS: number): Promise<number> {
  const { rows } = await db.query<{ b: string }>(
    `SELECT coalesce(sum(bytes), 0) AS b FROM repair_done
     WHERE done_at > now() - make_interval(secs => $1)`,
    [sinceS],
  );
  return Number(rows[0]?.b ?? 0);
}

/** Sum of the rates running repair jobs last reported (bytes/s). */
export async function repairRate(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ r: number | null }>(
    `SELECT sum(rate)::float8 AS r FROM jobs WHERE kind = 'repair' AND state = 'running'`,
  );
  return rows[0]?.r ?? 0;
}

/** Completed units with their times (oldest first), for rate measurements. */
export async function repairLog(
  db: Queryable,
  sinceS: number,
): Promise<Array<{ bytes: number; at: Date; agentId: string | null }>> {
  const { rows } = await db.query<{ bytes: string; done_at: Date; agent_id: string | null }>(
    `SELECT bytes, done_at, agent_id FROM repair_done
     WHERE done_at > now() - make_interval(secs => $1) ORDER BY done_at`,
    [sinceS],
  );
  return rows.map((r) => ({ bytes: Number(r.bytes), at: r.done_at, agentId: r.agent_id }));
}

/** Drop log rows older than a day. */
export async function pruneRepairLog(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM repair_done WHERE done_at < now() - interval '1 day'`);
}

/** Repair jobs each agent has run (destination), for least-transfers-count. */
export async function repairTransfers(db: Queryable): Promise<Map<string, number>> {
  const { rows } = await db.query<{ agent_id: string; n: string }>(
    `SELECT agent_id, count(*) AS n FROM jobs WHERE kind = 'repair' AND agent_id IS NOT NULL
     GROUP BY agent_id`,
  );
  return new Map(rows.map((r) => [r.agent_id, Number(r.n)]));
}

/** Repair jobs not yet finished: their destination, the donors they read from, source use. */
export async function runningRepairJobs(
  db: Queryable,
): Promise<Array<{ agentId: string; sourceAgents: string[]; seeds: boolean }>> {
  const { rows } = await db.query<{ agent_id: string; sources: string[] | null; seeds: boolean }>(
    `SELECT agent_id, ARRAY(SELECT jsonb_array_elements_text(payload->'sourceAgents')) AS sources,
            coalesce((payload->>'seeds')::boolean, false) AS seeds
     FROM jobs WHERE kind = 'repair' AND state IN ('queued', 'running') AND agent_id IS NOT NULL`,
  );
  return rows.map((r) => ({ agentId: r.agent_id, sourceAgents: r.sources ?? [], seeds: r.seeds }));
}

/** Unfinished repair jobs: id, destination, state, and seconds since they last reported. */
export async function unfinishedRepairJobs(
  db: Queryable,
): Promise<Array<{ id: string; agentId: string; state: string; silentS: number }>> {
  const { rows } = await db.query<{ id: string; agent_id: string; state: string; silent: number }>(
    `SELECT id, agent_id, state, extract(epoch FROM now() - updated_at)::float8 AS silent
     FROM jobs WHERE kind = 'repair' AND state IN ('queued', 'running')`,
  );
  return rows.map((r) => ({ id: r.id, agentId: r.agent_id, state: r.state, silentS: r.silent }));
}

/** Give up on repair jobs (their units go back to waiting at the next requeue). */
export async function cancelJobs(
  db: Queryable,
  ids: readonly string[],
  why: string,
): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `UPDATE jobs SET state = 'cancelled', error = $2, updated_at = now()
     WHERE id = ANY($1::uuid[]) AND state IN ('queued', 'running')`,
    [ids, why],
  );
}

/** `agentId:datasetId` of every delete job not yet run (a destination must not race them). */
export async function pendingDeletes(db: Queryable): Promise<Set<string>> {
  const { rows } = await db.query<{ k: string }>(
    `SELECT agent_id::text || ':' || dataset_id::text AS k FROM jobs
     WHERE kind = 'delete' AND state IN ('queued', 'running') AND agent_id IS NOT NULL
       AND dataset_id IS NOT NULL`,
  );
  return new Set(rows.map((r) => r.k));
}

/** Bytes a donor still holds by placement (what a leave has yet to move). */
export function heldMorsels(extents: readonly Extent[], agentId: string): number {
  let n = 0;
  for (const e of extents) {
    if (!e.donors.includes(agentId)) continue;
    const slots = e.donors.filter((d) => d === agentId).length;
    const cycle = e.unit * e.donors.length;
    // Whole cycles hold `slots × unit` each; the tail is counted exactly below.
    const whole = Math.floor(e.count / cycle);
    n += whole * slots * e.unit;
    for (let m = e.first + whole * cycle; m < e.first + e.count; m++) {
      const slot = (Math.floor((m - e.first) / e.unit) + e.phase) % e.donors.length;
      if (e.donors[slot] === agentId) n++;
    }
  }
  return n;
}

/** Morsels and bytes placement still puts on `agentId`, over every dataset. */
export async function placedOn(
  db: Queryable,
  agentId: string,
): Promise<{ morsels: number; bytes: number }> {
  const { rows } = await db.query<{
    morsel_size: number;
    copy: number;
    first: string;
    count: string;
    unit: number;
    phase: number;
    donors: string[];
  }>(
    `SELECT d.morsel_size, e.copy, e.first, e.count, e.unit, e.phase, e.donors::text[] AS donors
     FROM placement_extents e JOIN datasets d ON d.id = e.dataset_id
     WHERE $1::uuid = ANY(e.donors)`,
    [agentId],
  );
  let morsels = 0;
  let bytes = 0;
  for (const r of rows) {
    const n = heldMorsels([{ ...r, first: Number(r.first), count: Number(r.count) }], agentId);
    morsels += n;
    bytes += n * r.morsel_size;
  }
  return { morsels, bytes };
}

/**
 * Release a donor that left: revoked, its ledger zero (reservations released, used 0) and its
 * unfinished jobs cancelled. Runs on the caller's transaction.
 */
export async function releaseAgent(tx: Queryable, agentId: string): Promise<void> {
  await tx.query(
    'UPDATE agents SET revoked_at = coalesce(revoked_at, now()), used_bytes = 0 WHERE id = $1',
    [agentId],
  );
  await tx.query(
    `UPDATE reservations SET state = 'released', updated_at = now()
     WHERE agent_id = $1 AND state IN ('active', 'committed')`,
    [agentId],
  );
  await tx.query(
    `UPDATE jobs SET state = 'cancelled', updated_at = now()
     WHERE agent_id = $1 AND state IN ('queued', 'running')`,
    [agentId],
  );
}

/** Whether the donor asked to leave and whether it has been released. */
export async function leaveState(
  db: Queryable,
  agentId: string,
): Promise<{ leaving: boolean; released: boolean } | undefined> {
  const { rows } = await db.query<{ leaving: boolean; released: boolean }>(
    `SELECT leaving_at IS NOT NULL AS leaving, revoked_at IS NOT NULL AS released
     FROM agents WHERE id = $1`,
    [agentId],
  );
  return rows[0];
}
