import { Type, type Static } from '@sinclair/typebox';
import { MAX_THROTTLE_REASON_LENGTH, MAX_THROTTLE_REASONS } from '../limits.js';

/**
 * Why a donor's serving governor holds it back, for people: 'owner active', 'cpu 0.93 > 0.75',
 * 'schedule', 'paused by the owner', … Bounded so a heartbeat stays small.
 */
export const ThrottleReasons = Type.Array(Type.String({ maxLength: MAX_THROTTLE_REASON_LENGTH }), {
  maxItems: MAX_THROTTLE_REASONS,
});
export type ThrottleReasons = Static<typeof ThrottleReasons>;

/**
 * Reasons cut to the protocol's bounds (count and length), so a sender never has a heartbeat
 * refused over a long reason.
 *
 * @example clampThrottleReasons(['x'.repeat(200)]) // → ['xxx…' (80 characters)]
 */
export function clampThrottleReasons(reasons: readonly string[]): string[] {
  return reasons.slice(0, MAX_THROTTLE_REASONS).map((r) => {
    if (r.length <= MAX_THROTTLE_REASON_LENGTH) return r;
    return `${r.slice(0, MAX_THROTTLE_REASON_LENGTH - 1)}…`;
  });
}
