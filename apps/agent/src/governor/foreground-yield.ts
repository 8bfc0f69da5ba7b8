import { setTimeout as sleep } from 'node:timers/promises';
import { FOREGROUND_QUIET_MS, REPAIR_YIELD_RATE_BPS } from '@freeloader/protocol';
import { TokenBucket } from './token-bucket.js';

/** How often a held background transfer looks whether the foreground read is over (ms). */
const YIELD_POLL_MS = 50;

export interface ForegroundYieldOptions {
  /** Monotonic milliseconds (tests pass their own). */
  clock?: () => number;
  /** Quiet time after the last foreground read before background runs at full rate (ms). */
  quietMs?: number;
  /** Background rate while foreground reads run (bytes/s). */
  yieldRateBps?: number;
}

/**
 * Repair yields to foreground readers on this donor, as the governor makes everything yield to
 * the owner: while a client has read a morsel here within `quietMs`, background (repair) bytes,
 * sent or received, share a bucket at `yieldRateBps` (b / 8 by default); otherwise they pass.
 * Without it a repair running at b took the donor's uplink and CPU from a concurrent `get`,
 * which kept 0.72 of its rate in the repair benchmark (target 0.90).
 *
 * @example
 *   const fg = new ForegroundYield();
 *   fg.noteForeground();                 // a client GET was served
 *   await fg.background(1 << 20, signal); // a repair morsel now waits ≈ 1 s at 1 MiB/s
 */
export class ForegroundYield {
  private readonly clock: () => number;
  private readonly quietMs: number;
  private readonly rate: number;
  private lastForeground = -Infinity;
  private bucket: TokenBucket;

  constructor(opts: ForegroundYieldOptions = {}) {
    this.clock = opts.clock ?? (() => performance.now());
    this.quietMs = opts.quietMs ?? FOREGROUND_QUIET_MS;
    this.rate = opts.yieldRateBps ?? REPAIR_YIELD_RATE_BPS;
    this.bucket = new TokenBucket(this.rate, this.clock);
  }

  /** A client (foreground) morsel read was served now. */
  noteForeground(): void {
    // A new busy spell starts without the debt of the last one.
    if (!this.busy()) this.bucket = new TokenBucket(this.rate, this.clock);
    this.lastForeground = this.clock();
  }

  /** Whether a foreground read ran within the quiet time. */
  busy(): boolean {
    return this.clock() - this.lastForeground < this.quietMs;
  }

  /**
   * Milliseconds `bytes` of background transfer should wait now: 0 while no foreground read
   * runs, else its turn in the yield bucket, at most `maxMs`.
   *
   * @example fg.delayFor(1 << 20, 2_000) // → 0 when quiet; ≈ 1000 at 1 MiB/s behind nothing
   */
  delayFor(bytes: number, maxMs = Infinity): number {
    if (!this.busy()) return 0;
    return Math.min(maxMs, this.bucket.reserve(bytes));
  }

  /**
   * Wait {@link delayFor} (cut short when the foreground read ends first).
   *
   * @throws the signal's reason when `signal` aborts.
   */
  async background(bytes: number, signal?: AbortSignal, maxMs = Infinity): Promise<void> {
    const until = this.clock() + this.delayFor(bytes, maxMs);
    while (this.clock() < until && this.busy()) {
      await sleep(Math.min(YIELD_POLL_MS, until - this.clock()), undefined, { signal });
    }
  }
}
