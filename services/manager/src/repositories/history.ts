import type { HistoryPoint, HistorySeries } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import { iso } from './rows.js';

/** One value to store: a series, its subject (donor, dataset, or null for the cluster). */
export interface Sample {
  series: HistorySeries;
  subject: string | null;
  value: number;
}

/** Store samples taken at one instant (`at`, default now) in one statement. */
export async function insertSamples(
  db: Queryable,
  samples: readonly Sample[],
  at: Date = new Date(),
): Promise<void> {
  if (samples.length === 0) return;
  await db.query(
    `INSERT INTO history_samples (series, subject, at, value)
     SELECT s, u, $4, v FROM unnest($1::text[], $2::uuid[], $3::float8[]) AS t(s, u, v)`,
    [samples.map((s) => s.series), samples.map((s) => s.subject), samples.map((s) => s.value), at],
  );
}

/** How long raw samples live, the width they are averaged into after, and the horizon. */
export interface Retention {
  rawKeepS: number;
  bucketS: number;
  keepS: number;
}

/**
 * Bound the table: raw samples older than `rawKeepS` are folded into `bucketS`-wide averages
 * (cut at a bucket boundary, so no bucket is ever written twice), and anything older than
 * `keepS` is dropped. Rows are then at most subjects × (rawKeepS / sample interval +
 * keepS / bucketS) per series. Returns the buckets written and the rows dropped.
 *
 * @example await compactHistory(pool, { rawKeepS: 86400, bucketS: 600, keepS: 30 * 86400 })
 */
export async function compactHistory(
  db: Queryable,
  r: Retention,
): Promise<{ folded: number; dropped: number }> {
  const folded = await db.query(
    `WITH cut AS (
       SELECT to_timestamp(floor(extract(epoch FROM now() - make_interval(secs => $1)) / $2) * $2)
         AS before),
     old AS (
       DELETE FROM history_samples h USING cut
       WHERE h.resolution_s = 0 AND h.at < cut.before
       RETURNING h.series, h.subject, h.at, h.value)
     INSERT INTO history_samples (series, subject, at, value, resolution_s)
     SELECT series, subject, to_timestamp(floor(extract(epoch FROM at) / $2) * $2), avg(value), $2
     FROM old GROUP BY 1, 2, 3`,
    [r.rawKeepS, r.bucketS],
  );
  const dropped = await db.query(
    `DELETE FROM history_samples WHERE at < now() - make_interval(secs => $1)`,
    [r.keepS],
  );
  return { folded: folded.rowCount ?? 0, dropped: dropped.rowCount ?? 0 };
}

/** A series since `sinceS` ago, per subject, oldest first. */
export async function readHistory(
  db: Queryable,
  series: HistorySeries,
  subject: string | null | undefined,
  sinceS: number,
): Promise<Array<{ subject: string | null; points: HistoryPoint[] }>> {
  const { rows } = await db.query<{
    subject: string | null;
    at: Date;
    value: number;
    resolution_s: number;
  }>(
    `SELECT subject, at, value, resolution_s FROM history_samples
     WHERE series = $1 AND ($2::uuid IS NULL OR subject = $2::uuid)
       AND at >= now() - make_interval(secs => $3)
     ORDER BY subject NULLS FIRST, at`,
    [series, subject ?? null, sinceS],
  );
  const bySubject = new Map<string | null, HistoryPoint[]>();
  for (const r of rows) {
    const points = bySubject.get(r.subject) ?? [];
    points.push({ at: iso(r.at), value: r.value, resolutionS: r.resolution_s });
    bySubject.set(r.subject, points);
  }
  return [...bySubject].map(([s, points]) => ({ subject: s, points }));
}

/** Every storage or bandwidth donor not revoked: its ledger's used bytes. */
export async function donorsToSample(db: Queryable): Promise<Array<{ id: string; used: number }>> {
  const { rows } = await db.query<{ id: string; used: number }>(
    `SELECT id, used_bytes AS used FROM agents WHERE revoked_at IS NULL ORDER BY id`,
  );
  return rows.map((r) => ({ id: r.id, used: Number(r.used) }));
}

/**
 * Each dataset's summed import rate (bytes/s) over its running jobs, plus a zero for datasets
 * whose import jobs ended within `recentS` (so a chart shows the drop, not a held last value).
 */
export async function importRates(
  db: Queryable,
  recentS: number,
): Promise<Array<{ datasetId: string; rate: number }>> {
  const { rows } = await db.query<{ dataset_id: string; rate: number }>(
    `SELECT dataset_id, coalesce(sum(rate) FILTER (WHERE state = 'running'), 0)::float8 AS rate
     FROM jobs
     WHERE kind = 'import' AND dataset_id IS NOT NULL
       AND (state = 'running' OR updated_at > now() - make_interval(secs => $1))
     GROUP BY dataset_id ORDER BY dataset_id`,
    [recentS],
  );
  return rows.map((r) => ({ datasetId: r.dataset_id, rate: r.rate }));
}

/**
 * Move one subject's samples of a series to another: a retried import is a new dataset, and
 * its chart should still show the earlier attempts (with the gap between them).
 */
export async function adoptHistory(
  db: Queryable,
  series: HistorySeries,
  from: string,
  to: string,
): Promise<void> {
  await db.query(`UPDATE history_samples SET subject = $3 WHERE series = $1 AND subject = $2`, [
    series,
    from,
    to,
  ]);
}
