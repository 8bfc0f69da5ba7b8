import {
  REPAIR_AFTER_FALLBACK_MS,
  REPAIR_AFTER_MAX_MS,
  REPAIR_AFTER_MIN_MS,
  REPAIR_AFTER_MIN_OUTAGES,
  REPAIR_AFTER_PERCENTILE,
} from '@freeloader/protocol';

/** Where a repair threshold came from: the admin, the outages seen, or the documented default. */
export type RepairAfterBasis = 'configured' | 'observed' | 'fallback';

/**
 * The silence after which an offline donor counts as lost (ThriftStore §3.2: most outages of
 * desktops are transient and short; repairing them wastes bandwidth, waiting too long on a dead
 * disk risks the data). With an admin's value, that value. With at least
 * REPAIR_AFTER_MIN_OUTAGES observed outages, their REPAIR_AFTER_PERCENTILE (nearest rank),
 * clamped to [REPAIR_AFTER_MIN_MS, REPAIR_AFTER_MAX_MS]: a donor silent longer than 95 % of the
 * outages that ended is probably not coming back soon. Otherwise REPAIR_AFTER_FALLBACK_MS.
 *
 * @example
 *   repairAfter([], 60_000)                    // → { ms: 60000, basis: 'configured' }
 *   repairAfter([1000, 2000])                  // → { ms: 4 h, basis: 'fallback' }
 *   repairAfter(Array(20).fill(3_600_000))     // → { ms: 3600000, basis: 'observed' }
 */
export function repairAfter(
  outageDurationsMs: readonly number[],
  configuredMs?: number,
): { ms: number; basis: RepairAfterBasis } {
  if (configuredMs !== undefined) return { ms: configuredMs, basis: 'configured' };
  if (outageDurationsMs.length < REPAIR_AFTER_MIN_OUTAGES) {
    return { ms: REPAIR_AFTER_FALLBACK_MS, basis: 'fallback' };
  }
  const sorted = [...outageDurationsMs].sort((a, b) => a - b);
  const rank = Math.ceil(REPAIR_AFTER_PERCENTILE * sorted.length) - 1;
  const p = sorted[Math.max(0, Math.min(sorted.length - 1, rank))]!;
  return {
    ms: Math.round(Math.min(REPAIR_AFTER_MAX_MS, Math.max(REPAIR_AFTER_MIN_MS, p))),
    basis: 'observed',
  };
}
