import type { Queryable } from '../db/pool.js';

/** One bad copy: `morsel` of copy `copy` of a dataset, on donor `agentId`. */
export interface FaultRow {
  datasetId: string;
  copy: number;
  morsel: number;
  agentId: string;
  reason: 'corrupt' | 'missing';
  reportedBy: 'scrub' | 'startup' | 'client';
}

/**
 * Record bad copies (migration 007's `morsel_faults`): a copy reported again only refreshes its
 * row (reason, reporter, time). Returns the rows written.
 *
 * @example await recordFaults(pool, [{ datasetId, copy: 0, morsel: 7, agentId, reason: 'corrupt', reportedBy: 'scrub' }])
 */
export async function recordFaults(db: Queryable, reported: readonly FaultRow[]): Promise<number> {
  // One row per copy: ON CONFLICT cannot touch a row twice in one statement (the last report wins).
  const rows = [
    ...new Map(reported.map((r) => [`${r.datasetId} ${r.copy} ${r.morsel}`, r])).values(),
  ];
  if (rows.length === 0) return 0;
  const { rowCount } = await db.query(
    `INSERT INTO morsel_faults (dataset_id, copy, morsel, agent_id, reason, reported_by)
     SELECT * FROM unnest($1::uuid[], $2::int[], $3::bigint[], $4::uuid[], $5::text[], $6::text[])
     ON CONFLICT (dataset_id, copy, morsel) DO UPDATE SET
       agent_id = EXCLUDED.agent_id, reason = EXCLUDED.reason,
       reported_by = EXCLUDED.reported_by, reported_at = now()`,
    [
      rows.map((r) => r.datasetId),
      rows.map((r) => r.copy),
      rows.map((r) => r.morsel),
      rows.map((r) => r.agentId),
      rows.map((r) => r.reason),
      rows.map((r) => r.reportedBy),
    ],
  );
  return rowCount ?? 0;
}

/** The bad copies of one dataset, by morsel then copy. */
export async function faultsOfDataset(db: Queryable, datasetId: string): Promise<FaultRow[]> {
  const { rows } = await db.query<{
    copy: number;
    morsel: number;
    agent_id: string;
    reason: FaultRow['reason'];
    reported_by: FaultRow['reportedBy'];
  }>(
    `SELECT copy, morsel, agent_id, reason, reported_by FROM morsel_faults
     WHERE dataset_id = $1 ORDER BY morsel, copy`,
    [datasetId],
  );
  return rows.map((r) => ({
    datasetId,
    copy: r.copy,
    morsel: Number(r.morsel),
    agentId: r.agent_id,
    reason: r.reason,
    reportedBy: r.reported_by,
  }));
}
