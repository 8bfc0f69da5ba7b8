import { constants, open, type FileHandle } from 'node:fs/promises';
import { MiB } from '@freeloader/protocol';
import { DirectWritePace } from './direct-write-pace.js';

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
 * Morsels that come while DIRECT_WRITES_IN_FLIGHT direct writes are out go through the page
 * cache; a disk that takes direct writes slowly (see {@link DirectWritePace}) gets the page cache
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
  private directInFlight = 0;
  private directBytes = 0;
  private cachedBytes = 0;

  private constructor(
    private readonly buffered: FileHandle,
    why: string,
  ) {
    this.why = why;
  }

  /**
   * A writer for `fh` (a regular file open for writing, `sizeBytes` long when done), direct when
   * `wantDirect` and the platform, file system and an aligned buffer allow it.
   */
  static async open(
    fh: FileHandle,
    sizeBytes: number,
    align: AlignBuffers,
    wantDirect = true,
  ): Promise<OutputWriter> {
    const why = await whyNotDirect(fh, sizeBytes, wantDirect);
    const out = new OutputWriter(fh, why ?? '');
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

  /** Write `data` at `position`: directly when both are aligned, else through the page cache. */
  async write(data: Buffer, position: number): Promise<void> {
    if (
      this.useDirect &&
      this.directInFlight < DIRECT_WRITES_IN_FLIGHT &&
      position % DIRECT_IO_ALIGN_BYTES === 0 &&
      data.length % DIRECT_IO_ALIGN_BYTES === 0
    ) {
      try {
        await this.timed(data.length, () => this.direct!.write(data, 0, data.length, position));
        this.directBytes += data.length;
        return;
      } catch (e) {
        // A buffer that is not aligned after all (memory the slab does not own): page cache.
        if ((e as NodeJS.ErrnoException).code !== 'EINVAL') throw e;
        this.fallBack('the disk refused a direct write (EINVAL)');
      }
    }
    await this.buffered.write(data, 0, data.length, position);
    this.cachedBytes += data.length;
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

  /** Run one direct write, watching whether the disk keeps up ({@link DirectWritePace}). */
  private async timed(bytes: number, write: () => Promise<unknown>): Promise<void> {
    this.pace.started(performance.now());
    this.directInFlight++;
    let done = 0;
    try {
      await write();
      done = bytes;
    } finally {
      this.directInFlight--;
      const slow = this.pace.finished(performance.now(), done);
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
