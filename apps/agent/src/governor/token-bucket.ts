/** Smallest burst a finite bucket allows (bytes): one pacing slice always fits. */
export const MIN_BURST_BYTES = 64 * 1024;
/** A bucket holds this many seconds of its rate at most, so a rate change bites quickly. */
const BURST_SECONDS = 0.05;

/**
 * A token bucket in bytes with debt: `reserve(n)` always succeeds and says how long the caller
 * must wait before sending, so concurrent responses queue behind each other in reservation
 * order and the sum of what they send never exceeds the rate (plus one small burst).
 * The clock is injected (milliseconds, monotonic) so the arithmetic is testable without timers.
 *
 * @example
 *   const b = new TokenBucket(1_048_576, () => performance.now());
 *   const waitMs = b.reserve(65_536); // ≈ 0 at first, then ≈ 62.5 ms per further 64 KiB
 */
export class TokenBucket {
  private tokens = 0;
  private last: number;
  private rateBps: number;

  constructor(
    rateBps: number,
    private readonly clock: () => number,
  ) {
    this.rateBps = sanitize(rateBps);
    this.last = clock();
    this.tokens = this.burst();
  }

  /** Bytes per second; Infinity when unlimited (0 given to the constructor or setRate). */
  get rate(): number {
    return this.rateBps;
  }

  /**
   * Change the rate from now on. Debt already owed is repaid at the new rate, which is what
   * makes a drop take effect for responses already queued, not only for new ones.
   */
  setRate(rateBps: number): void {
    const next = sanitize(rateBps);
    if (next === this.rateBps) return;
    this.refill();
    this.rateBps = next;
    // No banked burst survives a change: a drop must not let a full old-rate burst through.
    this.tokens = Math.min(this.tokens, this.burst());
    if (!Number.isFinite(next)) this.tokens = 0;
  }

  /** Take `bytes` now; returns the milliseconds to wait before sending them (0 = send now). */
  reserve(bytes: number): number {
    if (!Number.isFinite(this.rateBps)) return 0;
    this.refill();
    this.tokens -= bytes;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.rateBps) * 1000;
  }

  private burst(): number {
    return Number.isFinite(this.rateBps)
      ? Math.max(MIN_BURST_BYTES, this.rateBps * BURST_SECONDS)
      : 0;
  }

  private refill(): void {
    const now = this.clock();
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.last = now;
    if (Number.isFinite(this.rateBps)) {
      this.tokens = Math.min(this.burst(), this.tokens + elapsed * this.rateBps);
    }
  }
}

/** 0 means unlimited, as in heartbeats' `rateCap`; a paused donor refuses rather than pacing at 0. */
function sanitize(rateBps: number): number {
  return rateBps > 0 ? rateBps : Infinity;
}
