/**
 * Window over which {@link InlineWriteBudget} measures the network thread's time in writes.
 */
export const INLINE_WRITE_WINDOW_MS = 250;

/**
 * Milliseconds of each window that direct writes made on the network thread may take (two
 * fifths of it). On the AMD VM of issue 19 a 1 MiB direct write made there took 1.0–2.3 ms
 * (median), 8.5–10 ms at the 90th percentile and up to 170 ms: a LAN read at 100 MB/s spends
 * 15–25 % of the thread in them, more in a window with a slow one (a fifth was too little: the
 * overflow went to the pool, see OutputWriter). A loopback read at 800 MB/s would need more than
 * the whole thread, so past the budget writes go to libuv's pool as before.
 */
export const INLINE_WRITE_BUDGET_MS = (INLINE_WRITE_WINDOW_MS * 2) / 5;

/**
 * How much of the network thread's time direct writes may take before they are handed to
 * threads: a write that overruns (a disk stalling for 150 ms) is paid back from the windows that
 * follow. Pure (the caller passes the clock), so its verdicts are table-tested.
 *
 * @example
 *   const budget = new InlineWriteBudget(0);
 *   budget.allows(0);   // true
 *   budget.spend(60);   // one write stalled 60 ms: more than a window's 50
 *   budget.allows(100); // false: the rest of this window goes to the pool
 *   budget.allows(250); // true: the next window paid back the 10 ms overrun
 */
export class InlineWriteBudget {
  private spent = 0;

  constructor(private windowStart: number) {}

  /** Whether a write may run on the network thread at `now` (milliseconds). */
  allows(now: number): boolean {
    const windows = Math.floor((now - this.windowStart) / INLINE_WRITE_WINDOW_MS);
    if (windows > 0) {
      this.windowStart += windows * INLINE_WRITE_WINDOW_MS;
      this.spent = Math.max(0, this.spent - windows * INLINE_WRITE_BUDGET_MS);
    }
    return this.spent < INLINE_WRITE_BUDGET_MS;
  }

  /** A write on the network thread took `ms`. */
  spend(ms: number): void {
    this.spent += ms;
  }
}
