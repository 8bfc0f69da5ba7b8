import type { SourceStatsView } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import { iso } from './rows.js';

interface Row {
  source: string;
  startup_latency_s: number | null;
  patch_rate: number | null;
  patch_width: number | null;
  import_rate: number | null;
  request_size: number;
  samples: number;
  updated_at: Date;
}

const toView = (r: Row): SourceStatsView => ({
  source: r.source,
  startupLatencyS: r.startup_latency_s,
  patchRate: r.patch_rate,
  patchWidth: r.patch_width,
  importRate: r.import_rate,
  requestSize: Number(r.request_size),
  samples: r.samples,
  updatedAt: iso(r.updated_at),
});

/** One validated observation of a source; null fields leave the stored average alone. */
export interface SourceSample {
  latencyS: number | null;
  patchRate: number | null;
  patchWidth: number | null;
  importRate: number | null;
  requestSize: number | null;
}

/** `new` folded into `old` with weight α ($7; the first observation is taken as is). */
const DECAY = (col: string, param: string): string =>
  `${col} = CASE WHEN ${param}::float8 IS NULL THEN source_stats.${col}
                 WHEN source_stats.${col} IS NULL THEN ${param}::float8
                 ELSE $7::float8 * ${param}::float8 + (1 - $7::float8) * source_stats.${col} END`;

/**
 * Fold one observation into a source's decaying averages (`source_stats`), creating its row
 * with `defaultRequestSize` when the sample has none. The weights are the caller's policy.
 *
 * @example await foldSourceStats(pool, 'https://host', sample, { alpha: 0.3, defaultRequestSize: 64 << 20 })
 */
export async function foldSourceStats(
  db: Queryable,
  source: string,
  s: SourceSample,
  weights: { alpha: number; defaultRequestSize: number },
): Promise<void> {
  const defaultRequestSize = Math.round(Number(weights.defaultRequestSize));
  await db.query(
    `INSERT INTO source_stats (source, startup_latency_s, patch_rate, patch_width, import_rate,
                               request_size, samples)
     VALUES ($1, $2, $3, $4, $5, coalesce($6, ${defaultRequestSize}), 1)
     ON CONFLICT (source) DO UPDATE SET
       ${DECAY('startup_latency_s', '$2')},
       ${DECAY('patch_rate', '$3')},
       patch_width = coalesce($4, source_stats.patch_width),
       ${DECAY('import_rate', '$5')},
       request_size = coalesce($6, source_stats.request_size),
       samples = source_stats.samples + 1,
       updated_at = now()`,
    [source, s.latencyS, s.patchRate, s.patchWidth, s.importRate, s.requestSize, weights.alpha],
  );
}

/** One source's stats, or null before its first observation. */
export async function getSourceStats(
  db: Queryable,
  source: string,
): Promise<SourceStatsView | null> {
  const { rows } = await db.query<Row>('SELECT * FROM source_stats WHERE source = $1', [source]);
  return rows[0] ? toView(rows[0]) : null;
}

/** Every source's stats, by source. */
export async function listSourceStats(db: Queryable): Promise<SourceStatsView[]> {
  const { rows } = await db.query<Row>('SELECT * FROM source_stats ORDER BY source');
  return rows.map(toView);
}

/**
 * A ready dataset imported from a source within the last day: its source, the bytes it cached
 * and the seconds since it was created (one sample of the source's import rate).
 */
export async function recentImportSample(
  db: Queryable,
  datasetId: string,
): Promise<{ uri: string; bytes: number; seconds: number } | undefined> {
  const { rows } = await db.query<{ uri: string; bytes: number; seconds: number }>(
    `SELECT source_uri AS uri, cached_bytes AS bytes,
            extract(epoch FROM now() - created_at)::float8 AS seconds
     FROM datasets WHERE id = $1 AND state = 'ready' AND source_uri IS NOT NULL
       AND created_at > now() - interval '1 day'`,
    [datasetId],
  );
  return rows[0];
}
