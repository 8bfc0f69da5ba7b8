// Where a queued job is announced: enqueueJob runs on the pool or inside a caller's transaction,
// and the agent it is for must hear of it only once the row is committed (it would claim nothing
// before). The notifier is found through the pool the job was written on, so every call site of
// enqueueJob announces without being handed anything.
import { afterCommit, type Queryable } from './pool.js';

/**
 * Told when a job is queued, with the agent it is for (null: any agent may claim it). The
 * manager's in-process one wakes that agent's job channel; a cross-manager one (LISTEN/NOTIFY)
 * can stand in front of it.
 */
export interface JobNotifier {
  notify(agentId: string | null): void;
}

const notifiers = new WeakMap<object, JobNotifier>();

/** Announce jobs written on `pool` (or in its transactions) to `notifier` from now on. */
export function attachJobNotifier(pool: Queryable, notifier: JobNotifier): void {
  notifiers.set(pool, notifier);
}

export function detachJobNotifier(pool: Queryable): void {
  notifiers.delete(pool);
}

/**
 * Tell the agent a job was queued for it, once `db`'s transaction (if any) committed. Nothing
 * happens when no notifier is attached: agents still find the job at their fallback claim.
 *
 * @example announceJob(tx, agentId) // after INSERT INTO jobs … on tx
 */
export function announceJob(db: Queryable, agentId: string | null): void {
  afterCommit(db, (pool) => notifiers.get(pool)?.notify(agentId));
}
