/** A queue may run this fraction of its share ahead of the least advanced queue, beyond its lead. */
export const LEAD_FRACTION = 0.01;

interface Share {
  total: number;
  issued: number;
  completed: number;
}

/**
 * Keeps parallel queues (one per donor) at about the same fraction of their work. A queue may
 * issue its next item only while its issued fraction stays within `lead` items (plus a small
 * fraction) of the least *completed* fraction of any queue with items outstanding: with `lead` the
 * number of requests a queue keeps in flight, every queue runs in lockstep with the slowest, as a
 * reader that must consume in order would. The least advanced queue is never held, so the read
 * always progresses. A held queue keeps its requests in flight but asks for no more: its share of
 * a shared bottleneck (the client's link) goes to the queues that lag instead of leaving them a
 * tail on an idle link.
 *
 * Measured on the 12-donor LAN (256 MiB, donors together faster than the client's link): counting
 * the laggard by items *issued* let a favoured donor get its in-flight depth further ahead, and
 * the last donor finished up to 0.2 s after the others.
 *
 * @example
 *   // Two donors of 100 morsels, two requests in flight each: "a" may issue its 3rd morsel
 *   // once "b" has completed 1 (a lead of 2 items plus 1 % of the share).
 *   const b = new ProgressBalance([['a', 100], ['b', 100]], 2);
 *   await b.turn('a'); b.issued('a'); … b.completed('a');
 */
export class ProgressBalance {
  private readonly shares = new Map<string, Share>();
  private wake: (() => void) | null = null;
  private changed: Promise<void> | null = null;

  /** `signal` aborting releases every held queue (one listener, however many wait). */
  constructor(
    shares: Iterable<[string, number]>,
    private readonly lead: number,
    private readonly signal?: AbortSignal,
  ) {
    for (const [key, total] of shares) this.shares.set(key, { total, issued: 0, completed: 0 });
    signal?.addEventListener('abort', () => this.notify(), { once: true });
  }

  /** Whether `key` may issue its next item now. */
  mayIssue(key: string): boolean {
    const s = this.shares.get(key);
    if (!s || s.total === 0) return true;
    let least = 1;
    for (const o of this.shares.values()) {
      if (o.completed < o.total) least = Math.min(least, o.completed / o.total);
    }
    // In items of this queue, with room for rounding: 51 − 0.48·100 is 3.0000000000000027.
    const ahead = s.issued + 1 - least * s.total;
    return ahead <= this.lead + LEAD_FRACTION * s.total + 1e-9;
  }

  /** Resolves once `key` may issue (at once if it may), or once the signal aborts. */
  async turn(key: string): Promise<void> {
    while (!this.mayIssue(key) && !this.signal?.aborted) {
      this.changed ??= new Promise<void>((resolve) => (this.wake = resolve));
      await this.changed;
    }
  }

  /**
   * The queues were re-dealt (work moved off a donor that failed): each key's share becomes what
   * it already issued plus `remaining`, new keys join, and held queues re-check.
   */
  rebalance(remaining: Iterable<[string, number]>): void {
    const left = new Map(remaining);
    for (const [key, s] of this.shares) s.total = s.issued + (left.get(key) ?? 0);
    for (const [key, total] of left) {
      if (!this.shares.has(key)) this.shares.set(key, { total, issued: 0, completed: 0 });
    }
    this.notify();
  }

  /** One queued item moved from `from`'s queue to `to`'s (work stealing): their shares follow. */
  moved(from: string, to: string): void {
    const a = this.shares.get(from);
    if (a) a.total = Math.max(a.issued, a.total - 1);
    const b = this.shares.get(to);
    if (b) b.total++;
    else this.shares.set(to, { total: 1, issued: 0, completed: 0 });
    this.notify();
  }

  /** `key` issued an item. */
  issued(key: string): void {
    const s = this.shares.get(key);
    if (s) s.issued++;
  }

  /** `key` completed an item: the least completed fraction may have risen, so waiters re-check. */
  completed(key: string): void {
    const s = this.shares.get(key);
    if (s) s.completed++;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    this.changed = null;
    wake?.();
  }
}
