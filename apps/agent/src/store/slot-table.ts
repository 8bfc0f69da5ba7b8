import type { LogRecord } from './index-log.js';

/** Where a committed morsel lives in its dataset's data file. */
export interface SlotEntry {
  slot: number;
  length: number;
  sha256: string;
}

/**
 * The in-memory map of one dataset's data file: which slot holds which morsel, which slots the
 * plan reserves for which index, and which slots are free. Slots are `morselSize` bytes each, so
 * slot `s` starts at byte `s * morselSize`.
 *
 * Allocation prefers an index's planned slot (keeping the file in index order for sequential
 * reads), then a freed unreserved slot, then a new slot at the end. A slot being written or read
 * is never handed out, so a reader can never see bytes of a morsel written after it started.
 */
export class SlotTable {
  readonly entries = new Map<number, SlotEntry>();
  private readonly owner = new Map<number, number>();
  private readonly planned = new Map<number, number>();
  private readonly reservedFor = new Map<number, number>();
  private readonly pending = new Set<number>();
  private readonly readers = new Map<number, number>();
  private readonly spare = new Set<number>();
  private nextSlot = 0;
  bytes = 0;

  /** Reserve the next slots, in order, for `indices` not yet planned; returns the new runs. */
  plan(indices: readonly number[]): PlannedRun[] {
    const fresh = [...new Set(indices)].filter((i) => !this.planned.has(i)).sort((a, b) => a - b);
    const runs = compressRuns(fresh, this.nextSlot);
    for (const run of runs) this.reserve(run);
    return runs;
  }

  /** Restore reservations read from the meta file (before replaying the log). */
  reserve(run: PlannedRun): void {
    const [first, stride, count, firstSlot] = run;
    for (let k = 0; k < count; k++) {
      const index = first + k * stride;
      const slot = firstSlot + k;
      this.planned.set(index, slot);
      this.reservedFor.set(slot, index);
    }
    this.nextSlot = Math.max(this.nextSlot, firstSlot + count);
  }

  /** Apply one replayed (or just committed) log record. */
  apply(rec: LogRecord): void {
    if (rec.kind === 'free') {
      const old = this.entries.get(rec.index);
      if (!old) return;
      this.entries.delete(rec.index);
      this.owner.delete(old.slot);
      this.bytes -= old.length;
      this.release(old.slot);
      return;
    }
    // A slot owned by another index was freed and reused: the newer record wins.
    const other = this.owner.get(rec.slot);
    if (other !== undefined && other !== rec.index) this.apply({ kind: 'free', index: other });
    const old = this.entries.get(rec.index);
    if (old) {
      this.owner.delete(old.slot);
      this.bytes -= old.length;
      if (old.slot !== rec.slot) this.release(old.slot);
    }
    this.entries.set(rec.index, { slot: rec.slot, length: rec.length, sha256: rec.sha256 });
    this.owner.set(rec.slot, rec.index);
    this.bytes += rec.length;
    this.nextSlot = Math.max(this.nextSlot, rec.slot + 1);
  }

  /** After replay: every slot below the end that nobody owns or reserves is spare. */
  rebuildSpare(): void {
    this.spare.clear();
    for (let s = 0; s < this.nextSlot; s++) {
      if (!this.owner.has(s) && !this.reservedFor.has(s)) this.spare.add(s);
    }
  }

  /** Slots the data file needs (its length is at most `slotCount * morselSize`). */
  get slotCount(): number {
    return this.nextSlot;
  }

  /** Pick a slot for a new write of `index`; it stays pending until commit or `abandon`. */
  allocate(index: number): number {
    const planned = this.planned.get(index);
    let slot: number | undefined;
    if (planned !== undefined && this.isFree(planned)) slot = planned;
    if (slot === undefined) {
      for (const s of this.spare) {
        if (!this.isFree(s)) continue; // being read: leave it for later
        this.spare.delete(s);
        slot = s;
        break;
      }
    }
    slot ??= this.nextSlot++;
    this.pending.add(slot);
    return slot;
  }

  /** The write to `slot` committed (its record is applied) or failed: it is no longer pending. */
  settle(slot: number): void {
    this.pending.delete(slot);
    if (!this.owner.has(slot)) this.release(slot);
  }

  startRead(slot: number): void {
    this.readers.set(slot, (this.readers.get(slot) ?? 0) + 1);
  }

  endRead(slot: number): void {
    const n = (this.readers.get(slot) ?? 1) - 1;
    if (n > 0) this.readers.set(slot, n);
    else this.readers.delete(slot);
  }

  private isFree(slot: number): boolean {
    return !this.owner.has(slot) && !this.pending.has(slot) && !this.readers.has(slot);
  }

  private release(slot: number): void {
    // Reserved slots are found again through the plan; only unreserved ones go to the spare pool.
    if (this.reservedFor.has(slot) || this.pending.has(slot)) return;
    this.spare.add(slot);
  }
}

/** `[firstIndex, stride, count, firstSlot]`: indices first + k·stride live in slots firstSlot + k. */
export type PlannedRun = [number, number, number, number];

/**
 * Compress sorted indices into arithmetic runs with consecutive slots, so a striped plan
 * (every 4th morsel, say) is one run in the meta file instead of a million numbers.
 *
 * @example compressRuns([0, 4, 8, 9], 0) // → [[0, 4, 3, 0], [9, 1, 1, 3]]
 */
export function compressRuns(sorted: readonly number[], firstSlot: number): PlannedRun[] {
  const runs: PlannedRun[] = [];
  let slot = firstSlot;
  for (let k = 0; k < sorted.length;) {
    const first = sorted[k]!;
    const stride = k + 1 < sorted.length ? sorted[k + 1]! - first : 1;
    let count = 1;
    while (k + count < sorted.length && sorted[k + count]! - sorted[k + count - 1]! === stride) {
      count++;
    }
    runs.push([first, stride, count, slot]);
    slot += count;
    k += count;
  }
  return runs;
}
