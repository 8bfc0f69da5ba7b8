/** A queue may run this many items ahead of the least advanced queue… */
export const LEAD_ITEMS = 1;
/** …plus this fraction of its share, so long reads are not held on every item. */
export const LEAD_FRACTION = 0.01;

interface Share {
  total: number;
  issued: number;
}

/**
 * Keeps parallel queues (one per donor) at about the same fraction of their work. A queue may
 * issue its next item only while its issued fraction stays within a small lead of the least
 * issued fraction of any queue with items left. The least advanced queue is never held, so the
 * read always progresses. A queue keeps its requests in flight but, held, asks for no more, so
 * it issues only as fast as the slowest queue completes: its share of a shared bottleneck (the
 * client's link) goes to the queues that lag instead of leaving them a tail on an idle link.
 *
 * @example
 *   // Two donors of 100 morsels each: "a" may issue at most 1 morsel + 1 % (2 morsels) more
 *   // than "b" has issued.
 *   const b = new ProgressBalance([['a', 100], ['b', 100]]);
 *   await b.turn('a'); b.issued('a');
 */
export class ProgressBalance {
  private readonly shares = new Map<string, Share>();
  private wake: (() => void) | null = null;
  private changed: Promise<void> | null = null;

  /** `signal` aborting releases every held queue (one listener, however many wait). */
  constructor(
    shares: Iterable<[string, number]>,
    private readonly signal?: AbortSignal,
  ) {
    for (const [key, total] of shares) this.shares.set(key, { total, issued: 0 });
    signal?.addEventListener('abort', () => this.notify(), { once: true });
  }

  /** Whether `key` may issue its next item now. */
  mayIssue(key: string): boolean {
    const s = this.shares.get(key);
    if (!s || s.total === 0) return true;
    let least = 1;
    for (const o of this.shares.values()) {
      if (o.issued < o.total) least = Math.min(least, o.issued / o.total);
    }
    const slack = LEAD_ITEMS / s.total + LEAD_FRACTION;
    return (s.issued + 1) / s.total - least <= slack;
  }

  /** Resolves once `key` may issue (at once if it may), or once the signal aborts. */
  async turn(key: string): Promise<void> {
    while (!this.mayIssue(key) && !this.signal?.aborted) {
      this.changed ??= new Promise<void>((resolve) => (this.wake = resolve));
      await this.changed;
    }
  }

  /** `key` issued an item: the least issued fraction may have risen, so waiters re-check. */
  issued(key: string): void {
    const s = this.shares.get(key);
    if (s) s.issued++;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    this.changed = null;
    wake?.();
  }
}
