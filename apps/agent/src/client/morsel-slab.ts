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

/**
 * Spare bytes before the first slot, so slots can start on a disk-block boundary in memory for
 * direct I/O: JavaScript cannot see an address, and a large SharedArrayBuffer from glibc starts
 * 16 bytes into a page.
 */
export const SLAB_ALIGN_SLACK_BYTES = 4096;

export class MorselSlab {
  readonly memory: SharedArrayBuffer;
  private free: Slot[] = [];
  private readonly waiters: ((slot: Slot) => void)[] = [];

  constructor(
    readonly slots: number,
    readonly slotSize: number,
  ) {
    if (!(slots >= 1) || !(slotSize >= 1)) throw new RangeError('a slab needs slots and a size');
    this.memory = new SharedArrayBuffer(slots * slotSize + SLAB_ALIGN_SLACK_BYTES);
    this.place(0);
  }

  /**
   * Move every slot to start `lead` bytes into the memory, for the first `lead` (0, then
   * SLAB_ALIGN_SLACK_BYTES − 16, then every 16 bytes) whose block `probe` accepts; false, and
   * the slots where they were, when none is. Only before any slot is in use.
   *
   * @example await slab.align(async (block) => tryDirectWrite(block)) // true: slots aligned
   */
  async align(probe: (block: Buffer) => Promise<boolean>): Promise<boolean> {
    if (this.free.length !== this.slots) throw new Error('a slab is aligned before it is used');
    const leads = [0, SLAB_ALIGN_SLACK_BYTES - 16];
    for (let lead = 16; lead < SLAB_ALIGN_SLACK_BYTES - 16; lead += 16) leads.push(lead);
    for (const lead of leads) {
      if (await probe(Buffer.from(this.memory, lead, SLAB_ALIGN_SLACK_BYTES))) {
        this.place(lead);
        return true;
      }
    }
    return false;
  }

  private place(lead: number): void {
    this.free = [];
    for (let id = 0; id < this.slots; id++) {
      const offset = lead + id * this.slotSize;
      this.free.push({ id, offset, buffer: Buffer.from(this.memory, offset, this.slotSize) });
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
