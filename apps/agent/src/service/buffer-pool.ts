/**
 * Reusable morsel-sized buffers for serving reads. Allocating a fresh 1 MiB buffer per GET made
 * the garbage collector the donor's largest CPU cost when serving flat out; recycled buffers
 * keep it out of the picture. Buffers beyond `keep` per size are left to the collector.
 *
 * @example const b = pool.take(1 << 20); try { … } finally { pool.give(b); }
 */
export class BufferPool {
  private readonly free = new Map<number, Buffer[]>();

  constructor(private readonly keep = 8) {}

  take(size: number): Buffer {
    return this.free.get(size)?.pop() ?? Buffer.allocUnsafeSlow(size);
  }

  give(buf: Buffer): void {
    let list = this.free.get(buf.length);
    if (!list) this.free.set(buf.length, (list = []));
    if (list.length < this.keep) list.push(buf);
  }
}
