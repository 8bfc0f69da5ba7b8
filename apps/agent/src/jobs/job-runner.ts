import type { Logger } from 'pino';
import {
  FreeLoaderError,
  isFreeLoaderError,
  MAX_HEARTBEAT_JOBS,
  type JobFinish,
  type JobKind,
  type JobProgress,
  type JobView,
} from '@freeloader/protocol';
import { backoffDelay } from '../backoff.js';
import type { ManagerClient } from '../manager-client.js';
import { JobChannel } from './job-channel.js';
import type { JobReportOutbox } from './job-reports.js';

/** What a job handler gets: a way to report progress and a signal that fires on cancellation. */
export interface JobContext {
  signal: AbortSignal;
  /**
   * Report progress; throttled by the caller. Throws when the report did not arrive, and aborts
   * the job when the manager cancelled it.
   */
  progress(p: JobProgress): Promise<void>;
  log: Logger;
}

/**
 * Delay bounds between claims that failed (milliseconds): the wake-up that asked for the claim
 * is spent, so the runner retries by itself (it used to wait for the 60 s channel check).
 */
const CLAIM_RETRY_BASE_MS = 500;
const CLAIM_RETRY_MAX_MS = 15_000;

export type JobHandler = (job: JobView, ctx: JobContext) => Promise<Record<string, unknown> | void>;

/**
 * Claims jobs for this agent from the manager and runs them with the handler of their kind:
 * at start, when the job channel says some are queued (it also asks the manager to look in the
 * database every JOB_CHANNEL_CHECK_MS, the safety net), and when a job ends.
 * The manager's job table is the source of truth: a job claimed by an agent that dies is handed
 * out again after its lease (renewed by the heartbeat, which lists {@link runningIds}), so
 * nothing is lost across restarts. Final reports go through the durable outbox: a job whose
 * outcome waits there is not run again when the manager hands it back.
 */
export class JobRunner {
  private timer: NodeJS.Timeout | undefined;
  private running = new Map<string, AbortController>();
  private stopped = false;
  private claiming = false;
  /** Asked to claim while a claim was in flight: claim again as soon as it returns. */
  private claimAgain = false;
  /** Claims that failed in a row (their retry backs off). */
  private claimFailures = 0;
  private readonly channel: JobChannel;
  /** The first claim after start also takes back jobs this agent was running when it stopped. */
  private resumed = false;

  constructor(
    private readonly manager: ManagerClient,
    /** One handler per kind this agent runs; it claims only those kinds. */
    private readonly handlers: Partial<Record<JobKind, JobHandler>>,
    private readonly log: Logger,
    private readonly reports: JobReportOutbox,
    private readonly maxConcurrent = 2,
  ) {
    this.channel = new JobChannel({ manager, onJobs: () => this.poke(), log });
  }

  start(): void {
    this.reports.nudge();
    this.schedule(0);
    this.channel.start();
  }

  /** Jobs are waiting: claim now instead of at the fallback claim. */
  poke(): void {
    this.schedule(0);
  }

  get active(): number {
    return this.running.size;
  }

  /** Ids of the jobs running now (the heartbeat renews their leases). */
  runningIds(): string[] {
    return [...this.running.keys()].slice(0, MAX_HEARTBEAT_JOBS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.channel.stop();
    this.reports.stop();
    clearTimeout(this.timer);
    for (const c of this.running.values())
      c.abort(new FreeLoaderError('UNAVAILABLE', 'agent stopping'));
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.claim(), delayMs);
    this.timer.unref?.();
  }

  private async claim(): Promise<void> {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    const room = this.maxConcurrent - this.running.size;
    // Full: the next job to end claims again.
    if (room <= 0) return;
    this.claiming = true;
    this.claimAgain = false;
    try {
      const jobs = await this.manager.request<JobView[]>('POST', '/jobs/claim', {
        kinds: Object.keys(this.handlers),
        max: room,
        ...(this.resumed ? {} : { resume: true }),
      });
      this.resumed = true;
      this.claimFailures = 0;
      for (const job of jobs) {
        // Its outcome is known and on its way: running it again would redo finished work.
        if (this.reports.has(job.id)) this.reports.nudge();
        else void this.run(job);
      }
    } catch (e) {
      const retryInMs = backoffDelay(this.claimFailures++, CLAIM_RETRY_BASE_MS, CLAIM_RETRY_MAX_MS);
      this.log.debug({ err: String(e), retryInMs }, 'job claim failed');
      // Retried until one goes through: the jobs it was asked for may be queued still.
      if (!this.claimAgain) this.schedule(retryInMs);
    } finally {
      this.claiming = false;
      if (this.claimAgain) this.schedule(0);
    }
  }

  private async run(job: JobView): Promise<void> {
    const handler = this.handlers[job.kind];
    const controller = new AbortController();
    this.running.set(job.id, controller);
    const log = this.log.child({ job: job.id, kind: job.kind, dataset: job.datasetId });
    const ctx: JobContext = {
      signal: controller.signal,
      log,
      progress: async (p) => {
        try {
          await this.manager.request('POST', `/jobs/${job.id}/progress`, p);
        } catch (e) {
          // A job the manager cancelled (or no longer knows) must stop; a flaky manager must not.
          if (isFreeLoaderError(e) && (e.status === 404 || e.status === 409 || e.status === 410)) {
            controller.abort(e);
          }
          throw e;
        }
      },
    };
    try {
      if (!handler)
        throw new FreeLoaderError('BAD_REQUEST', `this agent cannot run ${job.kind} jobs`);
      log.info('job started');
      const result = await handler(job, ctx);
      await this.finish(job.id, { state: 'done', ...(result ? { result } : {}) });
      log.info('job done');
    } catch (e) {
      const err = isFreeLoaderError(e) ? e : new FreeLoaderError('INTERNAL', String(e));
      log.warn({ err: err.message, code: err.code }, 'job failed');
      if (!controller.signal.aborted || !isFreeLoaderError(controller.signal.reason)) {
        await this.finish(job.id, { state: 'failed', error: err.message, errorCode: err.code });
      }
    } finally {
      this.running.delete(job.id);
      this.schedule(0);
    }
  }

  /** Hand the outcome to the outbox, which keeps it until the manager took it. */
  private async finish(id: string, report: JobFinish): Promise<void> {
    try {
      await this.reports.put(id, report);
    } catch (e) {
      this.log.error({ job: id, err: String(e) }, 'cannot keep the job report on disk');
    }
  }
}
