/**
 * How long a donor's failure (a refused or broken request, a lost hedge, a stall) keeps it behind
 * its healthier twins in a read (milliseconds). Remembered for the whole read, one hiccup cost a
 * donor its share for good: on the W=4 LAN (12 MB/s links, 512 MiB, n=2) three donors lost one
 * hedge each in the first seconds of a read and the fourth served 242 of the 537 MB alone, at
 * 0.55 of the link limit (the next two reads, without a hiccup, ran at 0.96). Three seconds: a
 * few hedge delays, so a donor that keeps failing is asked rarely, and one that recovered is back
 * within a fraction of a long read.
 */
export const FAILURE_MEMORY_MS = 3_000;

/**
 * Failures per donor within the last FAILURE_MEMORY_MS, and a version that changes whenever any
 * donor's count does (a new failure, or an old one forgotten), so a read that dealt its morsels
 * by health knows when to deal them again.
 *
 * @example
 *   const f = new RecentFailures(() => now);
 *   now = 0; f.add('A'); f.count('A'); // 1
 *   now = 3_000; f.count('A'); // 0 (forgotten), f.version() has moved on twice
 */
export class RecentFailures {
  private readonly at = new Map<string, number[]>();
  private changes = 0;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly memoryMs = FAILURE_MEMORY_MS,
  ) {}

  add(donor: string): void {
    let times = this.at.get(donor);
    if (!times) this.at.set(donor, (times = []));
    times.push(this.now());
    this.changes++;
  }

  /** Failures of `donor` within the memory. */
  count(donor: string): number {
    const times = this.at.get(donor);
    if (!times) return 0;
    this.forget(times, this.now());
    return times.length;
  }

  /** Changes whenever a count changes (it forgets expired failures of every donor first). */
  version(): number {
    const now = this.now();
    for (const times of this.at.values()) this.forget(times, now);
    return this.changes;
  }

  private forget(times: number[], now: number): void {
    let expired = 0;
    while (expired < times.length && now - times[expired]! >= this.memoryMs) expired++;
    if (expired === 0) return;
    times.splice(0, expired);
    this.changes++;
  }
}
