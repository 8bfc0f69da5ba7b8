import type { SourceStatsView } from '@freeloader/protocol';
import { MiB } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import {
  foldSourceStats,
  getSourceStats,
  listSourceStats,
} from '../repositories/prefix-sources.js';

/** Weight of a new observation in a decaying average: recent behaviour matters most. */
export const SOURCE_DECAY_ALPHA = 0.3;
/** Request size used until a source has shown what it likes (bytes): seed 002 Fig. 4. */
export const DEFAULT_REQUEST_SIZE = 64 * MiB;
/** Largest request a patching node makes: it must buffer it in memory (seed 002 §3.3). */
export const MAX_REQUEST_SIZE = 256 * MiB;

/** One observation; absent fields leave the stored average alone. */
export interface SourceObservation {
  latencyS?: number;
  patchRate?: number;
  patchWidth?: number;
  importRate?: number;
  requestSize?: number;
}

/**
 * Per-source L, R_patch, import rate and good request size (seed 002 §3.1: "these parameters can
 * be derived from actual dataset imports and suffix patches"), as decaying averages.
 */
export function createSourceRegistry(db: Queryable) {
  return {
    async observe(source: string, o: SourceObservation): Promise<void> {
      const valid = (n: number | undefined) =>
        n !== undefined && Number.isFinite(n) && n >= 0 ? n : null;
      const request = o.requestSize && o.requestSize > 0 ? Math.round(o.requestSize) : null;
      await foldSourceStats(
        db,
        source,
        {
          latencyS: valid(o.latencyS),
          patchRate: valid(o.patchRate),
          patchWidth: o.patchWidth ?? null,
          importRate: valid(o.importRate),
          requestSize: request,
        },
        { alpha: SOURCE_DECAY_ALPHA, defaultRequestSize: DEFAULT_REQUEST_SIZE },
      );
    },

    get: (source: string): Promise<SourceStatsView | null> => getSourceStats(db, source),

    list: (): Promise<SourceStatsView[]> => listSourceStats(db),
  };
}
export type SourceRegistry = ReturnType<typeof createSourceRegistry>;
