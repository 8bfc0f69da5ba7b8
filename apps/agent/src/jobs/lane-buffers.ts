/**
 * One morsel-sized buffer per lane of a bounded loop ({@link forEachBounded}), made on first use
 * and reused for every later item of that lane: a job's buffers are bounded by its lanes, never
 * by its morsels. A fresh buffer per morsel is garbage V8 only collects once its
 * external-memory limit (64 MiB) trips, so a receiving donor carried tens of MB of dead morsels.
 *
 * @example const slots = new LaneBuffers(MiB); await forEachBounded(items, 8, (m, lane) => fetch(m, slots.of(lane)));
 */
export class LaneBuffers {
  private readonly slots: Buffer[] = [];

  /** @param size bytes of each buffer (a morsel size) */
  constructor(readonly size: number) {}

  /** The buffer of `lane` (only one item of a lane runs at a time, so it is never shared). */
  of(lane: number): Buffer {
    return (this.slots[lane] ??= Buffer.allocUnsafeSlow(this.size));
  }

  /** Buffers made so far (at most the number of lanes used). */
  get allocated(): number {
    return this.slots.filter(Boolean).length;
  }
}
