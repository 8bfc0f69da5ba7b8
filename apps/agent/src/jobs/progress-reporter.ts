import { isFreeLoaderError, type MorselHash } from '@freeloader/protocol';
import { backoffDelay } from '../backoff.js';
import type { JobContext } from './job-runner.js';

/** How often progress (and the hashes gathered since) goes to the manager (milliseconds). */
export const PROGRESS_INTERVAL_MS = 500;
/** Hashes per progress report at most (keeps each body well under the JSON limit). */
const MAX_HASHES_PER_REPORT = 4096;
/**
 * Attempts to deliver the final report before the job fails, when the manager answers with an
 * error (while it cannot be reached at all, or answers UNAVAILABLE, the agent keeps trying).
 */
const FLUSH_ATTEMPTS = 6;
/** Longest wait between two deliveries of the final report (milliseconds). */
const FLUSH_MAX_DELAY_MS = 15_000;

export interface ProgressReporterOptions {
  /**
   * Report the rate since the last report (the console's rate and ETA); default true. Relocate
   * jobs report bytes only.
   */
  rate?: boolean;
}

/**
 * Batches a transfer job's progress: bytes done, the rate since the last report and, for
 * imports, the morsel hashes stored since then. Every transfer job (import, stream import,
 * relocate) reports through one of these. Reports go out at most every PROGRESS_INTERVAL_MS, one
 * at a time, so a slow manager never piles up requests.
 */
export class ProgressReporter {
  doneBytes = 0;
  private hashes: MorselHash[] = [];
  private perDonor: Record<string, number> = {};
  private last = { at: performance.now(), bytes: 0 };
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly ctx: JobContext,
    private readonly opts: ProgressReporterOptions = {},
  ) {}

  /** `bytes` more are done: of morsel `hash` if it was stored, delivered to `donor` if named. */
  add(bytes: number, hash?: MorselHash, donor?: string): void {
    this.doneBytes += bytes;
    if (hash) this.hashes.push(hash);
    if (donor) this.perDonor[donor] = (this.perDonor[donor] ?? 0) + bytes;
    const due = performance.now() - this.last.at >= PROGRESS_INTERVAL_MS;
    if ((due || this.hashes.length >= MAX_HASHES_PER_REPORT) && !this.inFlight) {
      // A failed report keeps its hashes queued for the next one; flush() retries.
      this.inFlight = this.send()
        .catch(() => undefined)
        .finally(() => {
          this.inFlight = null;
        });
    }
  }

  /**
   * Send everything not yet reported (call at the end, before finishing the job). A manager
   * that is away (restarting, its database down) is waited for: the job's work is done and its
   * lease says how long the manager waits in turn.
   */
  async flush(): Promise<void> {
    if (this.inFlight) await this.inFlight;
    let errors = 0;
    for (let attempt = 0; this.hashes.length > 0 || this.last.bytes !== this.doneBytes; attempt++) {
      try {
        await this.send();
      } catch (e) {
        const away = isFreeLoaderError(e) && e.code === 'UNAVAILABLE';
        if (this.ctx.signal.aborted || (!away && ++errors > FLUSH_ATTEMPTS)) throw e;
        await new Promise((r) => setTimeout(r, backoffDelay(attempt, 250, FLUSH_MAX_DELAY_MS)));
      }
    }
  }

  private async send(): Promise<void> {
    const now = performance.now();
    const seconds = Math.max((now - this.last.at) / 1000, 0.001);
    const rate = (this.doneBytes - this.last.bytes) / seconds;
    const batch = this.hashes.splice(0, MAX_HASHES_PER_REPORT);
    const doneBytes = this.doneBytes;
    const previous = this.last;
    this.last = { at: now, bytes: doneBytes };
    try {
      await this.ctx.progress({
        doneBytes,
        ...(this.opts.rate === false ? {} : { rate: Math.round(rate) }),
        ...(batch.length > 0 ? { hashes: batch } : {}),
        ...(Object.keys(this.perDonor).length > 0 ? { perDonor: { ...this.perDonor } } : {}),
      });
    } catch (e) {
      // Keep the hashes for the next report unless the job was cancelled (the signal says so).
      if (!this.ctx.signal.aborted) {
        this.hashes.unshift(...batch);
        this.last = previous;
      }
      throw e;
    }
  }
}
