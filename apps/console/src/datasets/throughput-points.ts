import type { TimePoint } from '../charts/time-axis';

/**
 * One throughput line from the manager's persisted samples (every sampling step, across
 * restarts) and its finer in-memory samples (recent progress events): the in-memory ones
 * replace persisted ones inside the span they cover, so the recent part is detailed and the
 * older part still there after a restart.
 *
 * @example mergeRatePoints([{at: 0, value: 1}, {at: 30e3, value: 2}], [{at: 29e3, value: 5}, {at: 31e3, value: 6}])
 *   // → [{at: 0, value: 1}, {at: 29e3, value: 5}, {at: 31e3, value: 6}]
 */
export function mergeRatePoints(
  persisted: readonly TimePoint[],
  live: readonly TimePoint[],
): TimePoint[] {
  if (live.length === 0) return [...persisted];
  const from = Math.min(...live.map((p) => p.at));
  const to = Math.max(...live.map((p) => p.at));
  return [...persisted.filter((p) => p.at < from || p.at > to), ...live].sort(
    (a, b) => a.at - b.at,
  );
}
