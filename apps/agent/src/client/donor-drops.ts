/**
 * How long a donor that stalled is first left out of a read (milliseconds). Dropped for the rest
 * of the read at its first lost hedge, a donor that hiccupped once lost its share of a long read
 * for good: on the W=4 LAN (12 MB/s links, 512 MiB, n=2) three donors lost one hedge each early
 * in a read and the fourth served 242 of the 537 MB alone, at 0.55 of the link limit (the next
 * two reads ran at 0.96). Three seconds: long enough that a stopped donor costs a read little
 * (its twins serve meanwhile), short enough that one that recovered is back within a long read.
 */
export const DROP_FIRST_MS = 3_000;
/**
 * The longest a donor is left out at once (milliseconds): each drop in a row doubles the time
 * up to this, so a frozen donor costs one hedge delay per minute of a long read or mount.
 */
export const DROP_MAX_MS = 60_000;

interface Drop {
  until: number;
  /** Drops in a row without a morsel delivered since. */
  level: number;
  /** The end of this drop was noticed (and counted as a change). */
  ended: boolean;
}

/**
 * Donors left out of a read for stalling, each for a time that doubles with every drop in a row
 * (DROP_FIRST_MS, 2×, 4× … DROP_MAX_MS) and starts over once the donor delivers a morsel again:
 * a circuit breaker per donor, so a stopped donor stays out and one that hiccupped comes back.
 * A donor nothing answers at ({@link dropForRead}: refused, no route) is out for the rest of
 * the read instead: a stalled donor may thaw, a closed port does not open within a read.
 *
 * @example
 *   const d = new DonorDrops(() => now);
 *   now = 0; d.drop('A'); // true (its first drop): left out until 3 s
 *   now = 3_000; d.isDropped('A'); // false: asked again
 *   d.drop('A'); // false (told already): left out until 3 s + 6 s (second drop in a row)
 *   d.delivered('A'); // the next drop is 3 s again
 */
export class DonorDrops {
  private readonly drops = new Map<string, Drop>();
  /** Donors ever dropped in this read, in the order of their first drop. */
  private readonly ever = new Set<string>();
  private changes = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Leave `donor` out (unless it is already); true at its first drop in the read, which is the
   * one worth telling the user about.
   */
  drop(donor: string): boolean {
    const now = this.now();
    const d = this.drops.get(donor);
    if (d && now < d.until) return false;
    const first = !this.ever.has(donor);
    const level = (d?.level ?? 0) + 1;
    const until = now + Math.min(DROP_FIRST_MS * 2 ** (level - 1), DROP_MAX_MS);
    this.drops.set(donor, { until, level, ended: false });
    this.ever.add(donor);
    this.changes++;
    return first;
  }

  /**
   * Leave `donor` out for the rest of the read (nothing listens at its address, or no route to
   * it: see unreachable-donor.ts); true when that is news (it was not out for good already). A
   * delivery does not bring it back: a late answer on an older connection says nothing about
   * the next one. The timed drops would ask it again after DROP_FIRST_MS, and keep asking: in
   * the degraded-read benchmark (W=8, n=2) a killed donor was refused 12 times in one read.
   *
   * @example
   *   d.dropForRead('A'); // true; d.isDropped('A') stays true whatever the clock says
   *   d.dropForRead('A'); // false (out already)
   */
  dropForRead(donor: string): boolean {
    if (this.drops.get(donor)?.until === Infinity) return false;
    this.drops.set(donor, { until: Infinity, level: 0, ended: false });
    this.ever.add(donor);
    this.changes++;
    return true;
  }

  isDropped(donor: string): boolean {
    const d = this.drops.get(donor);
    return d !== undefined && this.now() < d.until;
  }

  /** `donor` delivered a morsel: its next drop is a first one again. */
  delivered(donor: string): void {
    const d = this.drops.get(donor);
    if (d && !this.isDropped(donor)) this.drops.delete(donor);
  }

  /** Donors dropped at some point of this read, in order. */
  everDropped(): string[] {
    return [...this.ever];
  }

  /** Changes whenever a donor is dropped or its drop ends. */
  version(): number {
    const now = this.now();
    for (const d of this.drops.values()) {
      if (!d.ended && now >= d.until) {
        d.ended = true;
        this.changes++;
      }
    }
    return this.changes;
  }
}
