import type { Logger } from 'pino';
import { isFreeLoaderError, JOB_CHANNEL_CHECK_MS } from '@freeloader/protocol';
import { backoffDelay } from '../backoff.js';
import type { ManagerClient } from '../manager-client.js';

/** Delay bounds between attempts while the channel is broken (milliseconds). */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 15_000;
/**
 * Shortest time between two waits that came back empty (milliseconds): a manager that answers
 * at once (it is closing) must not turn the channel into a busy loop.
 */
const MIN_EMPTY_WAIT_MS = 1_000;

export interface JobChannelDeps {
  manager: Pick<ManagerClient, 'waitForJobs'>;
  /** The manager said jobs wait for this agent: claim them. */
  onJobs(): void;
  log: Logger;
}

/**
 * The agent's end of the job channel (issue 16 item 4): one long-poll held open on the manager
 * (`GET /jobs/wait`), answered early when a job is queued for this agent. Each wait sends the
 * cursor of the previous answer, so a job announced between two waits answers the next one at
 * once (see the manager's JobWaiters). When the channel
 * breaks (manager restart, network) it reconnects with backoff, and its first wait after that
 * asks the manager to look for jobs queued meanwhile (`check`); so does one wait every
 * JOB_CHANNEL_CHECK_MS, in case a wake-up was lost.
 */
export class JobChannel {
  private stopped = false;
  private failures = 0;
  private readonly stopping = new AbortController();

  constructor(private readonly deps: JobChannelDeps) {}

  start(): void {
    void this.run();
  }

  /** Stop waiting: the wait in flight is abandoned, so nothing keeps the process alive. */
  stop(): void {
    this.stopped = true;
    this.stopping.abort();
  }

  private async run(): Promise<void> {
    let checkedAt = -Infinity;
    // The last answer's cursor: kept across a broken channel, so a wake-up whose answer was
    // lost is answered again by the next wait (the manager judges it; a new one checks).
    let cursor: string | undefined;
    while (!this.stopped) {
      const startedAt = performance.now();
      try {
        const check = startedAt - checkedAt >= JOB_CHANNEL_CHECK_MS;
        const answer = await this.deps.manager.waitForJobs({ check, cursor }, this.stopping.signal);
        if (this.failures > 0) this.deps.log.info('job channel to the manager is back');
        this.failures = 0;
        cursor = answer.cursor;
        if (check) checkedAt = startedAt;
        if (answer.jobsPending) this.deps.onJobs();
        else await this.pause(MIN_EMPTY_WAIT_MS - (performance.now() - startedAt));
      } catch (e) {
        if (this.stopped) return;
        checkedAt = -Infinity;
        const delay = backoffDelay(this.failures++, RETRY_BASE_MS, RETRY_MAX_MS);
        // A refused agent (revoked) is the heartbeat's to report; the channel just waits longer.
        const refused = isFreeLoaderError(e) && (e.status === 401 || e.status === 403);
        this.deps.log.debug({ err: String(e), retryInMs: delay }, 'job channel broken');
        await this.pause(refused ? RETRY_MAX_MS : delay);
      }
    }
  }

  private pause(ms: number): Promise<void> {
    if (ms <= 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      this.stopping.signal.addEventListener('abort', done, { once: true });
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}
