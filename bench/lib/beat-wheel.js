/** The wheel's resolution, and how often its one timer runs (ms). */
export const WHEEL_TICK_MS = 20;

/**
 * Things due at given times (performance.now() ms), handed to `fire(item, due)` when their time
 * comes: one timer for the whole fleet, buckets of {@link WHEEL_TICK_MS}, so that scheduling
 * costs O(1) whatever order answers arrive in (10,000 agents each due an interval after its own
 * last answer are in no fixed order).
 *
 * @template T
 * @example
 *   const w = new BeatWheel((agent, due) => send(agent, due)); w.start();
 *   w.add(agent, performance.now() + 5_000);
 */
export class BeatWheel {
  /** @param {(item: T, due: number) => void} fire */
  constructor(fire) {
    this.fire = fire;
    /** @type {Map<number, { item: T, due: number }[]>} bucket number → what is due in it */
    this.buckets = new Map();
    /** The last bucket handed out. */
    this.done = Math.floor(performance.now() / WHEEL_TICK_MS);
    /** @type {number | undefined} performance.now() when paused */
    this.pausedAt = undefined;
    /** @type {NodeJS.Timeout | undefined} */
    this.timer = undefined;
  }

  start() {
    this.timer ??= setInterval(() => this.tick(), WHEEL_TICK_MS);
  }

  stop() {
    clearInterval(this.timer);
    this.buckets.clear();
  }

  /** @param {T} item @param {number} due */
  add(item, due) {
    // Never into a bucket already handed out: it is then due at the next tick.
    const b = Math.max(this.done + 1, Math.floor(due / WHEEL_TICK_MS));
    let bucket = this.buckets.get(b);
    if (!bucket) this.buckets.set(b, (bucket = []));
    bucket.push({ item, due });
  }

  /** Hand out what is due now (nothing while paused). */
  tick() {
    if (this.pausedAt !== undefined) return;
    const now = Math.floor(performance.now() / WHEEL_TICK_MS);
    while (this.done < now) {
      const b = ++this.done;
      const bucket = this.buckets.get(b);
      if (!bucket) continue;
      this.buckets.delete(b);
      for (const { item, due } of bucket) this.fire(item, due);
    }
  }

  pause() {
    this.pausedAt ??= performance.now();
  }

  /**
   * Go on, everything due as late as the pause was long, but none later than `maxAheadMs` from
   * now (what was scheduled during the pause must not be put off twice).
   *
   * @param {number} maxAheadMs
   */
  resume(maxAheadMs) {
    if (this.pausedAt === undefined) return;
    const now = performance.now();
    const late = now - this.pausedAt;
    this.pausedAt = undefined;
    const all = [...this.buckets.values()].flat();
    this.buckets.clear();
    this.done = Math.floor(now / WHEEL_TICK_MS);
    for (const { item, due } of all) this.add(item, Math.min(due + late, now + maxAheadMs));
  }
}
