/**
 * A morsel is hedged (asked of a second copy too) once it has been outstanding this many times
 * its donor's expected time: the donor's recent p90 per morsel times the requests ahead of it.
 * Three: below the stall factor (4), so a frozen donor's morsels arrive from the other copy
 * before the stall sweep even gives up on it, yet above a healthy donor's usual spread.
 */
export const HEDGE_LATENCY_FACTOR = 3;
/**
 * Never hedge sooner than this (milliseconds): below it a second request mostly duplicates
 * bytes a loaded machine's scheduling hiccup delayed, doubling load for nothing.
 */
export const HEDGE_FLOOR_MS = 400;
/** Hedge delay while the read has no latency sample yet (milliseconds). */
export const HEDGE_UNMEASURED_MS = 2_000;

/** Which request of a hedged pair answered first. */
export type HedgeWinner = 'primary' | 'backup';

/**
 * How long to wait for a donor before hedging (ms): HEDGE_LATENCY_FACTOR × its recent p90 per
 * morsel × (requests ahead of this one + 1), at least HEDGE_FLOOR_MS.
 *
 * @example hedgeDelayMs(30, 2) // → max(400, 3 × 30 × 3) = 400
 *          hedgeDelayMs(200, 1) // → 1200
 *          hedgeDelayMs(undefined, 0) // → 2000 (nothing measured yet)
 */
export function hedgeDelayMs(p90Ms: number | undefined, ahead: number): number {
  if (p90Ms === undefined) return HEDGE_UNMEASURED_MS;
  return Math.max(HEDGE_FLOOR_MS, HEDGE_LATENCY_FACTOR * p90Ms * (ahead + 1));
}

/**
 * Run `primary`; if it has not settled after `delayMs`, start `backup` too (when there is one).
 * The first to fulfil wins; when the backup wins, `cancelPrimary` is called (the primary's bytes
 * must never land afterwards). A rejection waits for the other; when both fail, the primary's
 * error is thrown (it names the donor the caller demotes). A backup that loses is left to finish
 * and its result is discarded.
 *
 * @example
 *   const { value, by } = await hedge(() => fromDonor(a), () => fromDonor(b), 400, () => abandon(a));
 */
export async function hedge<T>(
  primary: () => Promise<T>,
  backup: (() => Promise<T>) | undefined,
  delayMs: number,
  cancelPrimary: () => void,
): Promise<{ value: T; by: HedgeWinner }> {
  const first = primary();
  if (!backup) return { value: await first, by: 'primary' };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), delayMs);
  });
  const early = await Promise.race([
    first.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    late,
  ]);
  clearTimeout(timer);
  if (early !== 'late') {
    if ('error' in early) throw early.error;
    return { value: early.value, by: 'primary' };
  }
  const second = backup();
  second.catch(() => undefined);
  first.catch(() => undefined);
  try {
    const winner = await Promise.any([
      first.then((value) => ({ value, by: 'primary' as const })),
      second.then((value) => ({ value, by: 'backup' as const })),
    ]);
    if (winner.by === 'backup') cancelPrimary();
    return winner;
  } catch {
    return first.then((value) => ({ value, by: 'primary' as const }));
  }
}
