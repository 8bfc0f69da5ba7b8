/**
 * The client's bounded buffer pool (seed 000 §4.3: W·(S+1) morsels): fixed-size slots in one
 * SharedArrayBuffer, so hash workers can read a slot without copying or transferring it, and the
 * garbage collector never sees a per-morsel allocation. `acquire` waits when every slot is in
 * use — that wait is the read pipeline's backpressure.
 *
 * @example
 *   const slab = new MorselSlab(8, 1 << 20);
 *   const slot = await slab.acquire(); slot.buffer.write('x'); slab.release(slot);
 */
export interface Slot {
  readonly id: number;
  /** A view of the whole slot; callers use `buffer.subarray(0, length)`. */
  readonly buffer: Buffer;
  /** Byte offset of the slot in the shared memory (what hash workers need). */
  readonly offset: number;
}

export class MorselSlab {
  readonly memory: SharedArrayBuffer;
  private readonly free: Slot[] = [];
  private readonly waiters: ((slot: Slot) => void)[] = [];

  constructor(
    readonly slots: number,
    readonly slotSize: number,
  ) {
    if (!(slots >= 1) || !(slotSize >= 1)) throw new RangeError('a slab needs slots and a size');
    this.memory = new SharedArrayBuffer(slots * slotSize);
    for (let id = 0; id < slots; id++) {
      const offset = id * slotSize;
      this.free.push({ id, offset, buffer: Buffer.from(this.memory, offset, slotSize) });
    }
  }

  acquire(): Promise<Slot> {
    const slot = this.free.pop();
    if (slot) return Promise.resolve(slot);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(slot: Slot): void {
    const next = this.waiters.shift();
    if (next) next(slot);
    else this.free.push(slot);
  }

  get available(): number {
    return this.free.length;
  }
}
