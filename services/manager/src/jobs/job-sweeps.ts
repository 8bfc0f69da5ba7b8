import fp from 'fastify-plugin';
import type { JobView } from '@freeloader/protocol';
import { onJobFinished, type JobFinishedDeps } from '../dataset-lifecycle.js';
import type { JobsRepo } from '../repositories/jobs.js';
import { leaseVerdict } from './lease-expiry.js';

/** How often finished jobs past their retention are pruned (milliseconds). */
const RETENTION_SWEEP_MS = 10 * 60_000;

/** What the lease sweep touches; the app satisfies it. */
export type LeaseSweepDeps = JobFinishedDeps & {
  jobsRepo: Pick<JobsRepo, 'lapsedLeases' | 'requeueLapsed' | 'failLapsed' | 'unfinished'>;
  config: { jobLeaseMs: number };
};

export interface LeaseSweepResult {
  requeued: JobView[];
  failed: JobView[];
}

/**
 * The sweep that keeps nothing `running` forever: jobs whose agent stopped renewing their lease
 * are queued again (the agent, or whoever may, claims them anew) or, once out of attempts,
 * failed — and a failed job's consequences follow as if its agent had reported it (a failed
 * import releases its reservations). The first sweep, and the first after a database outage,
 * only starts a grace period of one lease: agents could not renew while the manager or its
 * database was away.
 */
export class LeaseSweeper {
  private graceUntil: Date | null = null;
  private needsGrace = true;

  constructor(private readonly deps: LeaseSweepDeps) {}

  async sweep(): Promise<LeaseSweepResult> {
    const result: LeaseSweepResult = { requeued: [], failed: [] };
    let lapsed;
    try {
      lapsed = await this.deps.jobsRepo.lapsedLeases();
    } catch (e) {
      this.needsGrace = true;
      throw e;
    }
    if (this.needsGrace) {
      this.needsGrace = false;
      this.graceUntil = new Date(lapsed.now.getTime() + this.deps.config.jobLeaseMs);
    }
    for (const job of lapsed.jobs) {
      const verdict = leaseVerdict(job, lapsed.now, this.graceUntil);
      if (verdict === 'requeue') {
        const requeued = await this.deps.jobsRepo.requeueLapsed(job.id);
        if (requeued) result.requeued.push(requeued);
      } else if (verdict === 'fail') {
        const failed = await this.deps.jobsRepo.failLapsed(
          job.id,
          `its agent stopped reporting (lease lapsed after ${job.attempts} attempt(s))`,
        );
        if (!failed) continue;
        result.failed.push(failed);
        await onJobFinished(this.deps, failed);
      }
    }
    return result;
  }
}

/**
 * Periodic job housekeeping: the lease sweep (every quarter lease) and the pruning of finished
 * jobs older than `jobRetentionMs`, each run by one manager of the database at a time.
 */
export default fp<{ timers?: boolean }>(
  async (app, opts) => {
    const sweeper = new LeaseSweeper(app);
    app.decorate('leaseSweeper', sweeper);
    if (opts.timers === false) return;
    const leaseTick = async (): Promise<void> => {
      try {
        const { requeued, failed } = await sweeper.sweep();
        for (const job of requeued)
          app.log.warn({ job: job.id, kind: job.kind }, 'lease lapsed; job re-queued');
        for (const job of failed)
          app.log.warn({ job: job.id, kind: job.kind }, 'lease lapsed; job failed');
      } catch (err) {
        app.log.warn({ err: String(err) }, 'job lease sweep failed; will retry');
      }
    };
    const pruneTick = async (): Promise<void> => {
      try {
        const pruned = await app.jobsRepo.pruneFinished(app.config.jobRetentionMs);
        if (pruned > 0) app.log.info({ pruned }, 'pruned finished jobs past their retention');
      } catch (err) {
        app.log.warn({ err: String(err) }, 'job retention sweep failed; will retry');
      }
    };
    // One manager of the database sweeps at a time (advisory locks; another takes over when
    // it dies); the first tick runs as soon as this manager holds the lock.
    app.singletons.start(
      'jobLeases',
      leaseTick,
      Math.max(250, Math.floor(app.config.jobLeaseMs / 4)),
    );
    app.singletons.start('jobRetention', pruneTick, RETENTION_SWEEP_MS);
  },
  { name: 'job-sweeps', dependencies: ['jobs-repo', 'soft-state', 'singletons'] },
);

declare module 'fastify' {
  interface FastifyInstance {
    leaseSweeper: LeaseSweeper;
  }
}
