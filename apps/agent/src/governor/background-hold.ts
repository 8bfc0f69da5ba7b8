import type { ThrottleState } from '@freeloader/protocol';

/**
 * Whether background work only the cache gains from (the scrub's disk reads and hashing) waits
 * in this governor state: while the owner is at the machine ('active') or donating is paused.
 * Machine contention alone does not hold it: the scrub is already paced to a trickle.
 *
 * @example holdsBackgroundWork('active') // → true
 * @example holdsBackgroundWork('idle')   // → false
 */
export function holdsBackgroundWork(state: ThrottleState): boolean {
  return state === 'active' || state === 'paused';
}
