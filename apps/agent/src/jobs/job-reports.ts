import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { isFreeLoaderError, type JobFinish } from '@freeloader/protocol';
import { backoffDelay } from '../backoff.js';

/** Delay bounds between deliveries while the manager does not take reports (milliseconds). */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;

/** Sends one job's final report; throws as ManagerClient does. */
export type SendReport = (jobId: string, report: JobFinish) => Promise<void>;

/**
 * Whether a failed delivery is final: the manager answered and will never take this report
 * (the job is unknown, someone else's, already finished or cancelled). Anything else — the
 * manager or its database unreachable, a 5xx — is worth sending again.
 *
 * @example isFinalRejection(new FreeLoaderError('CONFLICT', 'job is done')) === true
 */
export function isFinalRejection(e: unknown): boolean {
  return isFreeLoaderError(e) && e.status < 500 && e.code !== 'UNAVAILABLE' && e.status !== 429;
}

/**
 * The outbox of finished jobs' reports (`<dir>/job-reports/<jobId>.json`): a report is written
 * here before it is sent and removed only when the manager acknowledged it (or refused it for
 * good), so neither a manager outage nor an agent restart loses a job's outcome. Delivery runs
 * in the background, backing off while the manager is away; {@link nudge} retries at once (the
 * manager answered a heartbeat).
 */
export class JobReportOutbox {
  private readonly pending = new Map<string, JobFinish>();
  private timer: NodeJS.Timeout | undefined;
  private delivering: Promise<void> | undefined;
  private failures = 0;
  private stopped = false;
  private readonly dir: string;

  constructor(
    stateDir: string,
    private readonly send: SendReport,
    private readonly log: Logger,
  ) {
    this.dir = join(stateDir, 'job-reports');
  }

  /** Read the reports an earlier run could not deliver (call once, before {@link nudge}). */
  async load(): Promise<number> {
    await mkdir(this.dir, { recursive: true });
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith('.json')) continue;
      const path = join(this.dir, name);
      try {
        const { jobId, report } = JSON.parse(await readFile(path, 'utf8')) as {
          jobId: string;
          report: JobFinish;
        };
        this.pending.set(jobId, report);
      } catch (e) {
        // A torn write cannot happen (rename), so this is someone else's file: leave it be.
        this.log.warn({ file: path, err: String(e) }, 'unreadable job report ignored');
      }
    }
    if (this.pending.size > 0) {
      this.log.info({ reports: this.pending.size }, 'job reports to deliver from the last run');
    }
    return this.pending.size;
  }

  /** Whether the outcome of `jobId` waits for delivery (the job must not run again). */
  has(jobId: string): boolean {
    return this.pending.has(jobId);
  }

  get size(): number {
    return this.pending.size;
  }

  /** Keep `report` on disk, then deliver it (resolves once it is on disk). */
  async put(jobId: string, report: JobFinish): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = this.fileOf(jobId);
    await writeFile(`${file}.tmp`, JSON.stringify({ jobId, report }) + '\n', { mode: 0o600 });
    await rename(`${file}.tmp`, file);
    this.pending.set(jobId, report);
    this.nudge();
  }

  /** Try delivering now (and keep trying with backoff until every report is taken). */
  nudge(): void {
    if (this.stopped || this.pending.size === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.delivering ??= this.deliver().finally(() => (this.delivering = undefined));
  }

  /** Resolves when every report was delivered (tests), or rejects after `timeoutMs`. */
  async drained(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending.size > 0) {
      if (Date.now() > deadline) throw new Error(`${this.pending.size} job report(s) undelivered`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async deliver(): Promise<void> {
    for (const [jobId, report] of [...this.pending]) {
      if (this.stopped) return;
      try {
        await this.send(jobId, report);
        this.failures = 0;
      } catch (e) {
        if (!isFinalRejection(e)) {
          const delay = backoffDelay(this.failures++, RETRY_BASE_MS, RETRY_MAX_MS);
          if (this.failures === 1) {
            this.log.warn(
              { err: String(e), retryInMs: delay },
              'job report not delivered; will retry',
            );
          }
          this.timer = setTimeout(() => this.nudge(), delay);
          this.timer.unref?.();
          return;
        }
        this.log.warn({ job: jobId, err: String(e) }, 'manager refused the job report; dropped');
      }
      // The file goes first: once a report leaves `pending` it is gone from disk too, so a
      // restart cannot send it again and {@link drained} means nothing is left anywhere.
      await unlink(this.fileOf(jobId)).catch(() => undefined);
      this.pending.delete(jobId);
    }
    // Reports put while this pass ran are delivered by another pass.
    if (this.pending.size > 0 && !this.stopped) {
      this.timer = setTimeout(() => this.nudge(), 0);
      this.timer.unref?.();
    }
  }

  private fileOf(jobId: string): string {
    // Job ids are UUIDs from the manager; keep anything else from naming a path.
    return join(this.dir, `${jobId.replace(/[^0-9a-zA-Z-]/g, '_')}.json`);
  }
}
