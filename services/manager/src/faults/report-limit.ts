import { CLIENT_FAULT_REPORTS_PER_MIN, FreeLoaderError } from '@freeloader/protocol';

const WINDOW_MS = 60_000;

/**
 * A per-principal fixed-window limit on client bad-hash reports (CLIENT_FAULT_REPORTS_PER_MIN
 * reported faults per minute): a client cannot flood the fault table, whatever it claims.
 *
 * @example
 *   const limit = new FaultReportLimit();
 *   limit.admit('user:alice', 3); // ok; throws RATE_LIMITED once 60 were admitted this minute
 */
export class FaultReportLimit {
  private readonly windows = new Map<string, { start: number; used: number }>();

  constructor(
    private readonly perMinute = CLIENT_FAULT_REPORTS_PER_MIN,
    private readonly now: () => number = () => Date.now(),
  ) {}

  admit(principal: string, faults: number): void {
    const t = this.now();
    let w = this.windows.get(principal);
    if (!w || t - w.start >= WINDOW_MS) {
      if (this.windows.size > 10_000) this.prune(t);
      w = { start: t, used: 0 };
      this.windows.set(principal, w);
    }
    if (w.used + faults > this.perMinute) {
      throw new FreeLoaderError(
        'RATE_LIMITED',
        `at most ${this.perMinute} bad-hash reports per minute; try again later`,
      );
    }
    w.used += faults;
  }

  private prune(t: number): void {
    for (const [k, w] of this.windows) if (t - w.start >= WINDOW_MS) this.windows.delete(k);
  }
}
