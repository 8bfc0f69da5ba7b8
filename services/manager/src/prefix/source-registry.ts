import type pg from 'pg';
import type { SourceStatsView } from '@freeloader/protocol';
import { MiB } from '@freeloader/protocol';
import { iso } from '../repositories/rows.js';

/** Weight of a new observation in a decaying average: recent behaviour matters most. */
export const SOURCE_DECAY_ALPHA = 0.3;
/** Request size used until a source has shown what it likes (bytes): seed 002 Fig. 4. */
export const DEFAULT_REQUEST_SIZE = 64 * MiB;
/** Largest request a patching node makes: it must buffer it in memory (seed 002 §3.3). */
export const MAX_REQUEST_SIZE = 256 * MiB;

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

/** One observation; absent fields leave the stored average alone. */
export interface SourceObservation {
  latencyS?: number;
  patchRate?: number;
  patchWidth?: number;
  importRate?: number;
  requestSize?: number;
}

/** `new` folded into `old` with weight α (the first observation is taken as is). */
const DECAY = (col: string, param: string): string =>
  `${col} = CASE WHEN ${param}::float8 IS NULL THEN source_stats.${col}
                 WHEN source_stats.${col} IS NULL THEN ${param}::float8
                 ELSE $7::float8 * ${param}::float8 + (1 - $7::float8) * source_stats.${col} END`;

/**
 * Per-source L, R_patch, import rate and good request size (seed 002 §3.1: "these parameters can
 * be derived from actual dataset imports and suffix patches"), as decaying averages.
 */
export function createSourceRegistry(pool: pg.Pool) {
  return {
    async observe(source: string, o: SourceObservation): Promise<void> {
      const valid = (n: number | undefined) =>
        n !== undefined && Number.isFinite(n) && n >= 0 ? n : null;
      const request = o.requestSize && o.requestSize > 0 ? Math.round(o.requestSize) : null;
      await pool.query(
        `INSERT INTO source_stats (source, startup_latency_s, patch_rate, patch_width, import_rate,
                                   request_size, samples)
         VALUES ($1, $2, $3, $4, $5, coalesce($6, ${DEFAULT_REQUEST_SIZE}), 1)
         ON CONFLICT (source) DO UPDATE SET
           ${DECAY('startup_latency_s', '$2')},
           ${DECAY('patch_rate', '$3')},
           patch_width = coalesce($4, source_stats.patch_width),
           ${DECAY('import_rate', '$5')},
           request_size = coalesce($6, source_stats.request_size),
           samples = source_stats.samples + 1,
           updated_at = now()`,
        [
          source,
          valid(o.latencyS),
          valid(o.patchRate),
          o.patchWidth ?? null,
          valid(o.importRate),
          request,
          SOURCE_DECAY_ALPHA,
        ],
      );
    },

    async get(source: string): Promise<SourceStatsView | null> {
      const { rows } = await pool.query<Row>('SELECT * FROM source_stats WHERE source = $1', [
        source,
      ]);
      return rows[0] ? toView(rows[0]) : null;
    },

    async list(): Promise<SourceStatsView[]> {
      const { rows } = await pool.query<Row>('SELECT * FROM source_stats ORDER BY source');
      return rows.map(toView);
    },
  };
}
export type SourceRegistry = ReturnType<typeof createSourceRegistry>;
