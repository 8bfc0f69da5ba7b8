/**
 * A tie-breaker in [0, 0.25) for ordering the copies of one morsel: 0 for the fastest donor by
 * the manager's predicted rate, approaching 0.25 for the slowest, 0.125 for a donor with no
 * prediction. It stays below a throttle (0.5) or a failure (1), so speed only decides between
 * copies that are otherwise equally healthy.
 *
 * @example slowness('b', ['a', 'b'], new Map([['a', 100e6], ['b', 10e6]])) // → 0.225
 */
export function slowness(
  donor: string,
  copies: readonly string[],
  predicted: ReadonlyMap<string, number>,
): number {
  const rate = predicted.get(donor);
  if (rate === undefined) return 0.125;
  const fastest = Math.max(...copies.map((d) => predicted.get(d) ?? 0));
  return fastest > 0 ? 0.25 * (1 - rate / fastest) : 0;
}
