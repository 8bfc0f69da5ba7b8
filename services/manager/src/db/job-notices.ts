// Where a queued job is announced: enqueueJob runs on the pool or inside a caller's transaction,
// and the agent it is for must hear of it only once the row is committed (it would claim nothing
// before). The notifier is found through the pool the job was written on, so every call site of
// enqueueJob announces without being handed anything. Two paths carry the announcement: this
// manager's own waiters hear it right after COMMIT (afterCommit), and the other managers of the
// database hear it through a NOTIFY written by the same statement that queued the job, which
// PostgreSQL delivers at COMMIT and drops on ROLLBACK, so no queued job goes unannounced.
import { afterCommit, poolOf, type Queryable } from './pool.js';

/**
 * Told when a job is queued, with the agent it is for (null: any agent may claim it). The
 * manager's in-process one wakes that agent's job channel; `origin` (the manager's id) marks its
 * NOTIFYs so it can skip its own when they come back to it.
 */
export interface JobNotifier {
  notify(agentId: string | null): void;
  readonly origin?: string;
}

/** The payload's stand-in for "any agent may claim it" (agent ids are UUIDs). */
export const ANY_AGENT = '*';

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

/**
 * The origin to write into the job NOTIFYs of a statement on `db`: the attached notifier's
 * manager id, or '' (then every manager, this one too, acts on them: a spare wake-up).
 */
export function jobNoticeOrigin(db: Queryable): string {
  return notifiers.get(poolOf(db))?.origin ?? '';
}

/**
 * A job NOTIFY's payload: `<origin> <agent id or *>`, as the SQL that queues jobs writes it.
 *
 * @example parseJobNotice('m1 *') // { origin: 'm1', agentId: null }
 */
export function parseJobNotice(
  payload: string | undefined,
): { origin: string; agentId: string | null } | undefined {
  const space = payload?.lastIndexOf(' ') ?? -1;
  if (!payload || space < 0) return undefined;
  const agent = payload.slice(space + 1);
  if (!agent) return undefined;
  return { origin: payload.slice(0, space), agentId: agent === ANY_AGENT ? null : agent };
}
