/**
 * A counting semaphore: at most `limit` holders at once, waiters served in arrival order.
 *
 * @example const s = new Semaphore(2); await s.acquire(); try { … } finally { s.release(); }
 */
export class Semaphore {
  private held = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError('semaphore limit must be ≥ 1');
  }

  acquire(): Promise<void> {
    if (this.held < this.limit) {
      this.held++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held--;
  }

  get inUse(): number {
    return this.held;
  }

  /** Callers waiting for a place. */
  get waiting(): number {
    return this.waiters.length;
  }
}
