import { MAX_JOB_ATTEMPTS } from '@freeloader/protocol';

/** What the lease sweep does with a running job: leave it, queue it again, or fail it. */
export type LeaseVerdict = 'keep' | 'requeue' | 'fail';

export interface LeaseFacts {
  /** When the lease lapses (null: claimed before leases existed, i.e. lapsed). */
  leaseExpiresAt: Date | null;
  /** Claims so far, this one included. */
  attempts: number;
}

/**
 * Decide a running job's fate at `now` (the database's clock). Until `graceUntil` nothing is
 * judged: after a manager start or a database outage, agents could not renew and need one lease
 * period to be heard again. Then a lapsed lease re-queues the job while it has attempts left and
 * fails it once it used `maxAttempts` claims. The same rule holds for every job kind.
 *
 * @example
 *   const now = new Date('2026-01-01T00:10:00Z');
 *   leaseVerdict({ leaseExpiresAt: new Date('2026-01-01T00:09:00Z'), attempts: 1 }, now, null)
 *   // → 'requeue'
 */
export function leaseVerdict(
  job: LeaseFacts,
  now: Date,
  graceUntil: Date | null,
  maxAttempts = MAX_JOB_ATTEMPTS,
): LeaseVerdict {
  if (graceUntil && now < graceUntil) return 'keep';
  if (job.leaseExpiresAt && now <= job.leaseExpiresAt) return 'keep';
  return job.attempts < maxAttempts ? 'requeue' : 'fail';
}
