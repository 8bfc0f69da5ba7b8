import { MiB } from '@freeloader/protocol';

/**
 * Direct writes slower than this (bytes per second while one is in flight) mean the disk, not the
 * network, would set the read's pace: a spinning disk seeking between the W places an unordered
 * read writes at. From then on the page cache takes the writes (its writeback sorts them). An SSD
 * or a VM's virtio disk takes 1 MiB direct writes at 0.9–1.7 GB/s here (`dd oflag=direct`).
 */
export const DIRECT_WRITE_MIN_BYTES_PER_S = 200e6;

/** Direct-write bytes per measurement of {@link DIRECT_WRITE_MIN_BYTES_PER_S}. */
export const DIRECT_WRITE_WINDOW_BYTES = 32 * MiB;

/**
 * Slow windows in a row that make the verdict: a disk that stalls for a moment is not a slow
 * disk. The VM's disk here took 1 MiB direct writes in 0.9 ms (median) at ~1 GB/s, then for
 * 0.3–0.5 s once per 512 MiB read at W=12 in 80–190 ms (84–107 MB/s over a window).
 */
export const DIRECT_WRITE_SLOW_WINDOWS = 3;

/**
 * A slow window counts only when direct writes were in flight at least this share of it: a disk
 * that cannot keep up. Slow writes that leave the disk idle most of the time are a CPU-starved write
 * thread, not a slow disk (a loopback read at 480 MB/s measured 179 MB/s of direct writes in its
 * first window while the hash workers and the network thread held both cores).
 */
export const DIRECT_WRITE_SATURATED = 0.8;

/**
 * Whether a disk keeps up with a read's direct writes, measured over windows of
 * DIRECT_WRITE_WINDOW_BYTES: the rate while writes are in flight, and the share of the window
 * they were; DIRECT_WRITE_SLOW_WINDOWS slow ones in a row give the verdict. Pure (the caller passes the clock) so its verdicts are table-tested.
 *
 * @example
 *   const pace = new DirectWritePace(0);
 *   pace.started(0); pace.finished(80, 8 * MiB); // undefined: 8 of 32 MiB, no verdict yet
 *   // …8 MiB writes back to back, 80 ms each (105 MB/s, busy the whole time), until the third
 *   // window closes: 'the disk took direct writes at 105 MB/s'
 */
export class DirectWritePace {
  private inFlight = 0;
  private busySince = 0;
  private busyMs = 0;
  private bytes = 0;
  /** Slow windows in a row so far. */
  private slow = 0;

  constructor(private windowStart: number) {}

  /** A direct write started at `now` (milliseconds). */
  started(now: number): void {
    if (this.inFlight++ === 0) this.busySince = now;
  }

  /**
   * A direct write of `bytes` (0 when it failed) ended at `now`: why the disk is too slow for
   * direct writes when a window just closed showing it, else undefined.
   */
  finished(now: number, bytes: number): string | undefined {
    if (--this.inFlight === 0) this.busyMs += now - this.busySince;
    this.bytes += bytes;
    if (this.bytes < DIRECT_WRITE_WINDOW_BYTES) return undefined;
    const busyMs = this.busyMs + (this.inFlight > 0 ? now - this.busySince : 0);
    const rate = this.bytes / (Math.max(busyMs, 1e-3) / 1000);
    const saturated = busyMs >= DIRECT_WRITE_SATURATED * (now - this.windowStart);
    this.bytes = 0;
    this.busyMs = 0;
    this.busySince = now;
    this.windowStart = now;
    if (!saturated || rate >= DIRECT_WRITE_MIN_BYTES_PER_S) {
      this.slow = 0;
      return undefined;
    }
    if (++this.slow < DIRECT_WRITE_SLOW_WINDOWS) return undefined;
    return `the disk took direct writes at ${(rate / 1e6).toFixed(0)} MB/s`;
  }
}
