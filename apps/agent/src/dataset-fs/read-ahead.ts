/**
 * Sequential-access detection for one open file, like the kernel's readahead: a read that
 * continues where the last one ended (or skips forward by less than a morsel) extends a streak,
 * and the prefetch window grows with the streak — twice the bytes read in order so far, from
 * `minMorsels` up to `maxMorsels`, and at least `streamMorsels` once a whole morsel was read in
 * order — so `head -c 100` fetches little while `dd` or `md5sum` soon has many MiB in flight from
 * every donor. A jump elsewhere resets it: random reads fetch only
 * the morsels they touch.
 *
 * @example
 *   const ra = new ReadAhead({ morselSize: MiB, morselCount: 100, maxMorsels: 16 });
 *   const want = ra.onRead(0, 131072); // { from: 1, to: 3 }
 *   ra.issued(want.to);
 */
export class ReadAhead {
  private expected = -1;
  private streakBytes = 0;
  /** Prefetches were started up to this morsel (exclusive). */
  private issuedTo = 0;

  constructor(
    private readonly opts: {
      morselSize: number;
      morselCount: number;
      maxMorsels: number;
      minMorsels?: number;
      /**
       * The window once the streak has passed a whole morsel (the reader is streaming, not
       * sniffing a header): enough to keep several requests queued at every donor.
       */
      streamMorsels?: number;
    },
  ) {}

  /**
   * Record a read of `length` bytes at `position`; returns the morsels to prefetch that were not
   * asked for yet, or undefined when the access is not sequential or nothing is new.
   */
  onRead(position: number, length: number): { from: number; to: number } | undefined {
    const { morselSize, morselCount, maxMorsels } = this.opts;
    const minMorsels = Math.min(this.opts.minMorsels ?? 2, maxMorsels);
    const sequential =
      (this.expected < 0 && position === 0) ||
      (this.expected >= 0 && position >= this.expected && position - this.expected < morselSize);
    this.expected = position + length;
    if (!sequential) {
      this.streakBytes = 0;
      this.issuedTo = 0;
      return undefined;
    }
    this.streakBytes += length;
    if (maxMorsels <= 0) return undefined;
    const streaming = this.streakBytes > morselSize ? (this.opts.streamMorsels ?? 0) : 0;
    const window = Math.max(
      minMorsels,
      Math.min(maxMorsels, Math.max(streaming, Math.ceil((2 * this.streakBytes) / morselSize))),
    );
    const current = Math.floor((position + Math.max(length, 1) - 1) / morselSize);
    const from = Math.max(current + 1, this.issuedTo);
    const to = Math.min(morselCount, current + 1 + window);
    return from < to ? { from, to } : undefined;
  }

  /** Prefetches were started for every morsel below `to`. */
  issued(to: number): void {
    this.issuedTo = Math.max(this.issuedTo, to);
  }
}
