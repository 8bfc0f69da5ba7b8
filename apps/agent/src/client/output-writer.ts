import { writeSync } from 'node:fs';
import { constants, open, type FileHandle } from 'node:fs/promises';
import { MiB } from '@freeloader/protocol';
import { DirectWritePace } from './direct-write-pace.js';
import { InlineWriteBudget } from './inline-write-budget.js';
import { Semaphore } from './semaphore.js';

/**
 * Direct I/O wants the buffer's address, the file offset and the length aligned to the disk's
 * logical block: 4096 bytes covers every block size Linux disks use (512 and 4096).
 */
export const DIRECT_IO_ALIGN_BYTES = 4096;

/** Outputs smaller than this go through the page cache: they cost little either way. */
export const DIRECT_WRITE_MIN_BYTES = 64 * MiB;

/**
 * Direct writes in flight at once; a morsel that comes while they are goes through the page
 * cache. Half of libuv's four threads: when the disk stalls (the VM's disk here: 80–190 ms per
 * 1 MiB for 0.3–0.5 s, once per 512 MiB read at W=12), the other two keep taking writes, into
 * the page cache, instead of all four waiting on the disk while the slab fills and the read
 * stops. At 0.9 ms per direct write, two in flight take 2 GB/s.
 */
export const DIRECT_WRITES_IN_FLIGHT = 2;

/**
 * Morsels that may wait for one of the DIRECT_WRITES_IN_FLIGHT to end before the page cache
 * takes them instead: verified morsels come in bursts (a hash worker's batch, W donors finishing
 * together), and a page-cache write is the dear one (see {@link OutputWriter}). A disk that
 * cannot keep up still overflows to the page cache, or ({@link DirectWritePace}) gets it back
 * for the rest of the read.
 */
export const DIRECT_WRITES_QUEUED = 16;

/** Lets the caller align its buffers for direct I/O: tries placements until `probe` takes one. */
export type AlignBuffers = (probe: (block: Buffer) => Promise<boolean>) => Promise<boolean>;

/**
 * Writes a read's morsels to its output file at their offsets: straight from the slab to the disk
 * (O_DIRECT) where Linux and the file system allow it, else through the page cache.
 *
 * Why: each 1 MiB page-cache write copies the morsel into freshly allocated page-cache memory.
 * At W=12 on the emulated LAN that copy was 46 % of the client's CPU samples (`perf`, 512 MiB,
 * 3.4 of 4.2 CPU-s in the kernel), and the read reached 0.915 of the link where the same read to
 * /dev/null reached 0.981. A direct write costs a DMA from the slab slot and no copy, and a
 * dataset larger than memory no longer pushes the rest of the machine's files out of the cache.
 *
 * A direct write is made on the network thread itself while that takes at most two fifths of
 * the thread's time ({@link InlineWriteBudget}), else in libuv's pool. On the AMD VM of issue 19
 * (2 cores shared with 12 donors and the emulated network), a write handed to the pool took
 * 12–200 ms (median) from the call to its callback while the disk took 1.25 ms: the direct
 * writes fell behind, 81–92 % of a 512 MiB read at W=12 went through the page cache, and those
 * copies (`dd` there: 0.98 CPU-s per 512 MiB into new page-cache pages, 0.08 by O_DIRECT) and the
 * pool's fight for the file's lock were a third of the client's CPU samples. Made on the network
 * thread, the same writes took 2.1 ms (median), all went direct, and the client's CPU per GiB
 * fell from 12.5–14.5 to 9.4–10.1 s. Morsels that come while DIRECT_WRITES_IN_FLIGHT pool writes
 * are out wait for one behind at most DIRECT_WRITES_QUEUED others, else go through the page
 * cache (so does the overflow of a disk too slow for the read); a disk that takes the writes
 * timed here slowly (see {@link DirectWritePace}) gets the page cache
 * back for the rest of the read; `get --buffered` asks for it from the start.
 *
 * @example
 *   const out = await OutputWriter.open(fh, size, (probe) => reader.alignSlots(probe));
 *   await out.write(morsel.data, morsel.index * morselSize);
 *   await out.close(); // out.mode: 'direct I/O' or 'page cache (why)'
 */
export class OutputWriter {
  private direct: FileHandle | undefined;
  private useDirect = false;
  private why: string;
  private readonly pace = new DirectWritePace(performance.now());
  private readonly inline = new InlineWriteBudget(performance.now());
  /** The pool's direct writes: DIRECT_WRITES_IN_FLIGHT at once, the rest wait in line. */
  private readonly slots = new Semaphore(DIRECT_WRITES_IN_FLIGHT);
  private directBytes = 0;
  private cachedBytes = 0;

  private constructor(
    private readonly buffered: FileHandle,
    why: string,
    private readonly inlineAllowed: boolean,
    private readonly queueLimit: number,
  ) {
    this.why = why;
  }

  /**
   * A writer for `fh` (a regular file open for writing, `sizeBytes` long when done), direct when
   * `wantDirect` and the platform, file system and an aligned buffer allow it; `inline: false`
   * keeps every write off the calling thread, and up to `queue` writes wait for a pool slot
   * before the page cache takes them.
   */
  static async open(
    fh: FileHandle,
    sizeBytes: number,
    align: AlignBuffers,
    wantDirect = true,
    opts: { inline?: boolean; queue?: number } = {},
  ): Promise<OutputWriter> {
    const why = await whyNotDirect(fh, sizeBytes, wantDirect);
    const out = new OutputWriter(
      fh,
      why ?? '',
      opts.inline ?? true,
      opts.queue ?? DIRECT_WRITES_QUEUED,
    );
    if (why === undefined) await out.openDirect(fh, align);
    return out;
  }

  /**
   * How the writes went: 'direct I/O', 'page cache (the reason)', or 'direct I/O for 97 % of
   * the bytes, …' and what took the rest.
   */
  get mode(): string {
    if (this.directBytes === 0 && !this.useDirect) return `page cache (${this.why})`;
    const total = this.directBytes + this.cachedBytes;
    const share = total > 0 ? Math.round((100 * this.directBytes) / total) : 100;
    if (this.useDirect && share === 100) return 'direct I/O';
    const rest = this.useDirect
      ? 'the rest through the page cache while the disk was busy'
      : `then the page cache (${this.why})`;
    return `direct I/O for ${share} % of the bytes, ${rest}`;
  }

  /**
   * Write `data` at `position`: directly when both are aligned (on this thread within its
   * budget, else in the pool once a slot is free or frees up for it), else through the page
   * cache.
   */
  async write(data: Buffer, position: number): Promise<void> {
    const aligned =
      position % DIRECT_IO_ALIGN_BYTES === 0 && data.length % DIRECT_IO_ALIGN_BYTES === 0;
    if (this.useDirect && aligned) {
      try {
        if (this.inlineAllowed && this.inline.allows(performance.now())) {
          this.writeInline(data, position);
          return;
        }
        if (await this.poolWrite(data, position)) return;
      } catch (e) {
        // A buffer that is not aligned after all (memory the slab does not own): page cache.
        if ((e as NodeJS.ErrnoException).code !== 'EINVAL') throw e;
        this.fallBack('the disk refused a direct write (EINVAL)');
      }
    }
    await this.buffered.write(data, 0, data.length, position);
    this.cachedBytes += data.length;
  }

  /** One direct write on this thread, timed against the inline budget and the disk's pace. */
  private writeInline(data: Buffer, position: number): void {
    const start = performance.now();
    this.pace.started(start);
    let done = 0;
    try {
      let at = 0;
      // O_DIRECT writes to a regular file are whole or fail; the loop is for a short one anyway.
      while (at < data.length) {
        at += writeSync(this.direct!.fd, data, at, data.length - at, position + at);
      }
      done = data.length;
      this.directBytes += done;
    } finally {
      const end = performance.now();
      this.inline.spend(end - start);
      const slow = this.pace.finished(end, done);
      if (slow) this.fallBack(slow);
    }
  }

  /** Close the direct descriptor (the caller owns and closes `fh`). */
  async close(): Promise<void> {
    const d = this.direct;
    this.direct = undefined;
    await d?.close();
  }

  private async openDirect(fh: FileHandle, align: AlignBuffers): Promise<void> {
    try {
      // The same open file, by its descriptor: the name may be a temp file's, or any at all.
      this.direct = await open(`/proc/self/fd/${fh.fd}`, constants.O_WRONLY | constants.O_DIRECT);
    } catch (e) {
      this.why = `the file system refuses direct I/O (${(e as NodeJS.ErrnoException).code})`;
      return;
    }
    // The probe writes one block at offset 0, which morsel 0 overwrites.
    const aligned = await align(async (block) => {
      try {
        await this.direct!.write(block, 0, DIRECT_IO_ALIGN_BYTES, 0);
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EINVAL') return false;
        throw e;
      }
    }).catch((e: unknown) => {
      this.why = `a direct write failed (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
      return false;
    });
    if (aligned) this.useDirect = true;
    else {
      this.why ||= 'no buffer placement the disk accepts';
      await this.close();
    }
  }

  /**
   * One direct write in the pool once one of the DIRECT_WRITES_IN_FLIGHT slots is free, waiting
   * behind at most `queueLimit` others; false (nothing written) when the line is full or direct
   * writes stopped while this one waited.
   */
  private async poolWrite(data: Buffer, position: number): Promise<boolean> {
    const busy = this.slots.inUse >= DIRECT_WRITES_IN_FLIGHT;
    if (busy && this.slots.waiting >= this.queueLimit) return false;
    await this.slots.acquire();
    try {
      // A slow disk or a refused write meanwhile: the page cache, not the line behind the disk.
      if (!this.useDirect) return false;
      await this.timed(data.length, () => this.direct!.write(data, 0, data.length, position));
      this.directBytes += data.length;
      return true;
    } finally {
      this.slots.release();
    }
  }

  /**
   * Run one pool write (its slot taken). Only when no write is made inline does it tell the
   * disk's pace ({@link DirectWritePace}): a pool write's time runs from the call to its callback,
   * and on a busy machine that is mostly the wait for a thread and for the event loop (12–200 ms
   * median on the AMD VM while the disk took 1.25 ms), which would pass for a slow disk; the
   * writes made inline time the disk alone.
   */
  private async timed(bytes: number, write: () => Promise<unknown>): Promise<void> {
    const paced = !this.inlineAllowed;
    if (paced) this.pace.started(performance.now());
    let done = 0;
    try {
      await write();
      done = bytes;
    } finally {
      const slow = paced ? this.pace.finished(performance.now(), done) : undefined;
      if (slow) this.fallBack(slow);
    }
  }

  private fallBack(why: string): void {
    if (!this.useDirect) return;
    this.useDirect = false;
    this.why = why;
  }
}

/**
 * Why the output must go through the page cache, or undefined when direct I/O may be tried.
 *
 * @example await whyNotDirect(fh, 2 ** 30, true) // undefined on Linux, for a regular file
 */
export async function whyNotDirect(
  fh: FileHandle,
  sizeBytes: number,
  wantDirect: boolean,
): Promise<string | undefined> {
  if (!wantDirect) return 'asked for with --buffered';
  if (constants.O_DIRECT === undefined || process.platform !== 'linux') {
    return 'no direct I/O on this platform';
  }
  if (sizeBytes < DIRECT_WRITE_MIN_BYTES) return 'a small output';
  if (!(await fh.stat()).isFile()) return 'not a regular file';
  return undefined;
}
