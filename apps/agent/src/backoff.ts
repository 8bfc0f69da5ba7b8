/**
 * Exponential backoff with full jitter, capped: the delay before retry number `attempt` (0-based).
 * Jitter spreads a cluster of agents reconnecting to a restarted manager.
 *
 * @example backoffDelay(0, 500, 30_000, () => 1) === 500; backoffDelay(10, 500, 30_000, () => 1) === 30_000
 */
export function backoffDelay(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.max(baseMs / 2, Math.round(ceiling * random()));
}
