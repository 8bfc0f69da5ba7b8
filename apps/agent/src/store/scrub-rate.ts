import {
  SCRUB_MAX_BYTES_PER_S,
  SCRUB_MIN_BYTES_PER_S,
  SCRUB_PERIOD_MS,
} from '@freeloader/protocol';

/** How fast the scrub goes: a full pass per period, or a fixed rate (tests, benchmarks). */
export interface ScrubSettings {
  /** One full pass over everything stored per this many milliseconds (default SCRUB_PERIOD_MS). */
  periodMs?: number;
  /**
   * A fixed rate in bytes/s instead of the period's (Infinity: as fast as the disk allows). Not
   * clamped: it is the owner's explicit choice.
   */
  bytesPerSecond?: number;
}

/**
 * The scrub rate in bytes/s: a fixed rate when one is set, else the stored bytes spread over the
 * period, kept within [SCRUB_MIN_BYTES_PER_S, SCRUB_MAX_BYTES_PER_S].
 *
 * @example
 *   scrubRate(100 * GiB, {})                      // → 88.8 KB/s (100 GiB in 14 days)
 *   scrubRate(1 * GiB, {})                        // → 65536 (the floor: a pass in ~4.5 hours)
 *   scrubRate(100 * TiB, {})                      // → 8 MiB/s (the ceiling)
 *   scrubRate(1 * GiB, { bytesPerSecond: 1e6 })   // → 1e6
 */
export function scrubRate(storedBytes: number, settings: ScrubSettings): number {
  if (settings.bytesPerSecond !== undefined) return settings.bytesPerSecond;
  const periodMs = settings.periodMs ?? SCRUB_PERIOD_MS;
  const spread = (storedBytes * 1000) / periodMs;
  return Math.min(SCRUB_MAX_BYTES_PER_S, Math.max(SCRUB_MIN_BYTES_PER_S, spread));
}
