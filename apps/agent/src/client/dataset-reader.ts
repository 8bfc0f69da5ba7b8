import { FreeLoaderError, morselCount, morselLength, type DatasetMap } from '@freeloader/protocol';
import { DonorPools } from './donor-pool.js';
import { HashPool, type SharedMemory } from './hash-pool.js';
import { MapHashes } from './map-hashes.js';
import { HedgedFetch, type DonorRate, type RequestReservation } from './hedged-fetch.js';
import { MorselLocator, placeNodes } from './morsel-locator.js';
import { MorselSealing } from './morsel-sealing.js';
import { MorselSlab } from './morsel-slab.js';
import type { ReadTrace } from './read-trace.js';
import { suffixCheck } from './suffix-check.js';
import { SuffixReader } from './suffix-reader.js';

export { PER_DONOR_IN_FLIGHT, type DonorRate } from './hedged-fetch.js';

export interface ReaderOptions {
  pools?: DonorPools;
  /** The durable copy: read bytes [start, end) from the dataset's source when no donor can. */
  fromSource?: (start: number, end: number) => Promise<Buffer>;
  /** Told about every donor failure (dead, stalled, bad hash) so the manager can be informed. */
  onDonorFailure?: (donorId: string, error: FreeLoaderError) => void;
  /** Told when `donorId` sent morsel `index` with a bad hash (the manager records a fault). */
  onBadCopy?: (donorId: string, index: number) => void;
  /** Requests in flight per donor (default PER_DONOR_IN_FLIGHT). */
  perDonorInFlight?: number;
  /** Verifies hashes off the network thread; shared by readers of one client. */
  hashes?: HashPool;
  /** Expected hashes when the map carries only a page of them (see {@link mapHashesOf}). */
  mapHashes?: MapHashes;
  /** Morsel buffers (slots) this reader may hold at once: bounds its memory. */
  slabSlots?: number;
  /**
   * Slots per donor added to the default slab for morsels verified and waiting for their
   * consumer (an unordered read's output writes), so requests go on meanwhile.
   */
  writeBehind?: number;

  /** Donors an earlier reader of the same read has left out for now (the mount's map refresh). */
  dropped?: Iterable<string>;
  /** Told once per read when a donor is first left out (it stalled repeatedly or lost a hedge). */
  onDonorDropped?: (donorId: string, error: FreeLoaderError) => void;
  /** Records where the read's time goes (`get --trace`). */
  trace?: ReadTrace;
}

/** Morsels read ahead per donor beyond the one in flight (window sizing). */
export const READ_AHEAD_PER_DONOR = 4;
/**
 * Busy time a donor needs in this read before its measured rate replaces the manager's
 * prediction when choosing between copies (milliseconds): a few morsels' worth on a LAN.
 */
export const MEASURED_RATE_MIN_BUSY_MS = 200;

/** A verified morsel in a slab slot; `release()` gives the slot back. */
export interface Morsel {
  index: number;
  data: Buffer;
  release(): void;
}

/**
 * Reads a dataset's morsels from its donors with verified hashes. `readMorsel` serves random
 * access (the mount); `readIntoSlot` fills a slab slot, which `readInOrder` (in-order-read.ts,
 * `get` to a pipe) and `readUnordered` (unordered-read.ts, `get` to a file) drive.
 * A donor that fails is reported, demoted for a few seconds, and the morsel is fetched from
 * another copy or, last, from the source by Range — so the bytes are right or the read fails loudly.
 * Donors the map does not call live are not contacted at all; a donor whose head-of-line morsel
 * waits far longer than its recent latency ({@link StallWatch}, checked by one periodic sweep)
 * has its outstanding morsels re-requested elsewhere, and after repeated stalls is left out for a
 * while (longer each time: {@link DonorDrops}).
 */
export class DatasetReader {
  readonly count: number;
  /** Where the read's time goes, when traced. */
  readonly trace: ReadTrace | undefined;
  private readonly pools: DonorPools;
  private readonly ownPools: boolean;
  private readonly hashes: HashPool;
  /** Set for an encrypted dataset: seals source bytes, opens verified morsels. */
  private readonly sealing: MorselSealing | undefined;
  private readonly ownHashes: boolean;
  /** Each morsel's expected hash: the map's, or fetched in pages for a large dataset. */
  private readonly mapHashes: MapHashes;
  private readonly slab: MorselSlab;
  /** The uncached suffix, patched by patching nodes (seed 002), when the map has a plan. */
  private readonly suffix: SuffixReader | undefined;
  /** Decides, per morsel, between donor copies, a patching node and the source. */
  private readonly locator: MorselLocator;
  /** Hedged requests to the donors, with their slots, rates, latency and stalls. */
  private readonly fetch: HedgedFetch;

  constructor(
    readonly map: DatasetMap,
    private readonly opts: ReaderOptions = {},
  ) {
    this.count = morselCount(map.dataset.sizeBytes, map.dataset.morselSize);
    this.trace = opts.trace;
    this.ownPools = !opts.pools;
    this.pools = opts.pools ?? new DonorPools();
    this.mapHashes = opts.mapHashes ?? new MapHashes(map);
    this.ownHashes = !opts.hashes;
    this.hashes = opts.hashes ?? new HashPool();
    this.sealing = MorselSealing.of(map, (i) => this.mapHashes.tag(i));
    this.suffix = map.suffix ? new SuffixReader(map, map.suffix) : undefined;
    this.locator = new MorselLocator(map, this.suffix, {
      sourceBacked: !!opts.fromSource,
      wait: (d) => this.expectedWait(d),
    });
    for (const d of opts.dropped ?? []) this.locator.drop(d);
    this.fetch = new HedgedFetch({
      ...opts,
      map,
      pools: this.pools,
      locator: this.locator,
      sealing: this.sealing,
    });
    const slots = opts.slabSlots ?? this.defaultWindow() + 8 + (opts.writeBehind ?? 0) * this.width;
    this.slab = new MorselSlab(slots, map.dataset.morselSize);
  }

  /** Distinct donors of the primary copy: the stripe node set. */
  get width(): number {
    return new Set(this.map.extents.filter((e) => e.copy === 0).flatMap((e) => e.donors)).size;
  }

  /**
   * The seed's buffer pool in morsels, W·(S+1) (S the stripe size), or the patching nodes' window
   * when a suffix is patched: the read-ahead of an in-order reader that keeps every donor busy
   * without letting one run ahead of the others (the mount's default).
   *
   * @example // 12 donors, stripes of one morsel: 24
   */
  stripeWindow(): number {
    const unit = Math.max(1, ...this.map.extents.map((e) => e.unit));
    const patching = (this.suffix?.width ?? 0) * READ_AHEAD_PER_DONOR;
    return Math.max(2, this.width * (unit + 1), patching);
  }

  /**
   * The read window in morsels: at least {@link stripeWindow}, and at least READ_AHEAD_PER_DONOR
   * per donor, so every donor always has requests queued behind the one on the wire and its link
   * never idles between morsels.
   */
  defaultWindow(): number {
    return Math.max(this.stripeWindow(), this.width * READ_AHEAD_PER_DONOR);
  }

  /**
   * Donors of morsel `index`, usable ones first, fewest failures first, unthrottled first, then
   * the faster copy first (by the manager's predicted rate); the patching node for the suffix.
   * The ranking is {@link MorselLocator}'s.
   */
  candidates(index: number): string[] {
    return placeNodes(this.locator.locate(index));
  }

  /**
   * Whether the map gives every morsel at least two copies (n ≥ 2), so an unordered read can
   * even donors out by moving queued morsels between twins.
   */
  replicated(): boolean {
    const second = this.map.extents.filter((e) => e.copy === 1);
    return second.reduce((n, e) => n + e.count, 0) >= this.count && this.count > 0;
  }

  /** Health rank of a copy in this read, lower is better ({@link MorselLocator.health}). */
  health(donor: string): number {
    return this.locator.health(donor);
  }

  /** Changes whenever any donor's health may have ({@link MorselLocator.healthVersion}). */
  healthVersion(): number {
    return this.locator.healthVersion();
  }

  /**
   * A donor's delivery rate for choosing between copies (bytes/s): measured in this read once it
   * was busy MEASURED_RATE_MIN_BUSY_MS, else the manager's prediction, else 0 (unknown: all
   * unknown donors count as equally fast).
   */
  donorRate(donor: string): number {
    const r = this.fetch.rate(donor);
    if (r && r.busyMs >= MEASURED_RATE_MIN_BUSY_MS) return (r.bytes / r.busyMs) * 1000;
    return this.locator.predictedRate(donor) ?? 0;
  }

  /**
   * Place the slab's slots where `probe` (a direct write of one block) accepts them, before the
   * read starts ({@link MorselSlab.align}).
   */
  alignSlots(probe: (block: Buffer) => Promise<boolean>): Promise<boolean> {
    return this.slab.align(probe);
  }

  /**
   * Wait for a free request slot of `donor`'s and hold it for the morsel the caller then chooses
   * (pass it to {@link readIntoSlot}); {@link unreserve} it when no morsel used it.
   */
  reserveRequest(donor: string): Promise<RequestReservation> {
    return this.fetch.reserve(donor);
  }

  /** Give back a reservation its morsel did not use (nothing to do once one did). */
  unreserve(r: RequestReservation): void {
    this.fetch.unreserve(r);
  }

  /** Seconds (or, rates unknown, requests) until a new request to `donor` would be answered. */
  private expectedWait(donor: string): number {
    const queued = this.fetch.queued(donor) + 1;
    const rate = this.donorRate(donor);
    if (!(rate > 0)) return queued;
    // A donor whose head-of-line morsel is already late (frozen, overloaded) is that much later.
    const late = this.fetch.headAgeMs(donor) / 1000;
    return (queued * this.map.dataset.morselSize) / rate + late;
  }

  /**
   * Morsels split over the donors that should serve them, each working through its own queue:
   * over every live copy, by rate and share ({@link MorselLocator.spread}).
   */
  spread(indices: readonly number[] = this.readOrder()): Map<string, number[]> {
    return this.locator.spread(indices, (d) => this.donorRate(d) || 1);
  }

  /** Morsel `index` as a buffer the caller owns (random access: the mount). */
  async readMorsel(index: number, signal?: AbortSignal): Promise<Buffer> {
    const morsel = await this.readIntoSlot(index, signal);
    try {
      return Buffer.from(morsel.data);
    } finally {
      morsel.release();
    }
  }

  /**
   * Fetch and verify one morsel into a slab slot: donors in order of health, then the source.
   * `prefer` is asked first when it holds a copy as healthy as the best (the donor whose queue
   * the morsel was spread to); a {@link reserveRequest} reservation names that donor and holds
   * one of its request slots for this morsel.
   */
  async readIntoSlot(
    index: number,
    signal?: AbortSignal,
    prefer?: string | RequestReservation,
  ): Promise<Morsel> {
    this.checkIndex(index);
    const t0 = performance.now();
    const slot = await this.slab.acquire();
    this.trace?.mark('slot', index, t0);
    const release = (): void => this.slab.release(slot);
    try {
      const data = await this.fill(index, this.slab, slot.offset, slot.buffer, signal, prefer);
      return { index, data, release };
    } catch (e) {
      release();
      throw e;
    }
  }

  /**
   * Fetch and verify morsel `index` into the start of `into` (memory the caller shares with the
   * hash workers, such as one buffer of the mount's cache: no slot, no copy); returns its length.
   *
   * @example
   *   const buf = { memory: new SharedArrayBuffer(map.dataset.morselSize) };
   *   const n = await reader.readInto(7, buf); // Buffer.from(buf.memory, 0, n) is morsel 7
   */
  async readInto(index: number, into: SharedMemory, signal?: AbortSignal): Promise<number> {
    this.checkIndex(index);
    const data = await this.fill(index, into, 0, Buffer.from(into.memory), signal);
    return data.length;
  }

  private checkIndex(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.count) {
      throw new FreeLoaderError(
        'VALIDATION_FAILED',
        `morsel ${index} is outside the dataset (0…${this.count - 1})`,
      );
    }
  }

  /**
   * Morsel `index` into `target` (bytes of `shared` from `offset`), verified (and, for an
   * encrypted dataset, opened in place); its bytes.
   */
  private async fill(
    index: number,
    shared: SharedMemory,
    offset: number,
    target: Buffer,
    signal?: AbortSignal,
    preferred?: string | RequestReservation,
  ): Promise<Buffer> {
    const reservation = typeof preferred === 'object' ? preferred : undefined;
    const prefer = typeof preferred === 'object' ? preferred.donor : preferred;
    const { sizeBytes, morselSize } = this.map.dataset;
    const length = morselLength(sizeBytes, morselSize, index);
    if (target.length < length) throw new RangeError(`morsel ${index} needs ${length} bytes`);
    const expected = await this.mapHashes.expected(index);
    const hash = (): Promise<string> => this.hashes.hashSlot(shared, offset, length);
    // Encrypted: the AES-GCM tag check (which opens the bytes in place) stands for the SHA-256.
    const verified = async (): Promise<boolean> => {
      const t0 = performance.now();
      const ok = this.sealing
        ? await this.sealing.open(this.hashes, shared, offset, length, index)
        : (await hash()) === expected;
      this.trace?.mark('verify', index, t0);
      return ok;
    };
    const place = this.locator.locate(index);
    // The uncached suffix comes from the patching nodes, verified by the suffix reader.
    if (place.kind === 'patching') {
      const plain = (): Buffer => target.subarray(0, length);
      const check = suffixCheck({ index, expected, hash, plain, sealing: this.sealing });
      return this.suffix!.readVerified(index, length, target, check, signal);
    }
    const copies = place.kind === 'donors' ? [...place.copies] : [];
    const at = prefer ? copies.indexOf(prefer) : -1;
    if (at > 0 && this.locator.health(prefer!) === this.locator.health(copies[0]!)) {
      copies.splice(at, 1);
      copies.unshift(prefer!);
    }
    const got = await this.fetch.fromCopies(
      {
        index,
        length,
        expected,
        target,
        verified,
        signal,
        ...(reservation ? { reservation } : {}),
      },
      copies,
    );
    if ('data' in got) return got.data;
    const { lastError } = got;
    if (this.opts.fromSource) {
      const start = index * morselSize;
      const bytes = await this.opts.fromSource(start, start + length);
      bytes.copy(target);
      // Never stored (the uncached suffix of a prefix import, read without a patch plan): no
      // tag to check it by, and the source, pinned to the imported version, is the reference.
      if (this.sealing && !(await this.sealing.hasTag(index))) return target.subarray(0, length);
      this.sealing?.seal(index, target.subarray(0, length));
      if (!(await verified())) {
        throw new FreeLoaderError(
          'SOURCE_CHANGED',
          `morsel ${index} read from the source does not match the cached hash`,
        );
      }
      return target.subarray(0, length);
    }
    throw new FreeLoaderError(
      'UNAVAILABLE',
      `morsel ${index} is unavailable: ${lastError?.message ?? 'no donor holds it'}`,
    );
  }

  /** Morsels asked of a second copy (or the source) because the first was slow, and won by it. */
  hedges(): { asked: number; won: number } {
    return this.fetch.hedges();
  }

  /**
   * Every morsel index, in the order an out-of-order read should ask for them: index order,
   * except that a patched suffix goes the way its patching nodes download it (seed 002).
   */
  readOrder(): number[] {
    return this.locator.readOrder(this.count);
  }

  /** Donors left out at some point of the read because they stalled (first drop first). */
  droppedDonors(): string[] {
    return this.locator.droppedDonors();
  }

  /** Donors left out of the read now. */
  droppedNow(): string[] {
    return this.locator.droppedNow();
  }

  /** TCP connection attempts this reader's pools made to `donor` (by id). */
  connectionAttempts(donor: string): number {
    return this.fetch.connectionAttempts(donor);
  }

  /** Observed per-donor delivery (for rate reports to the manager). */
  donorRates(): Map<string, DonorRate> {
    return this.fetch.donorRates();
  }

  async close(): Promise<void> {
    this.fetch.close();
    if (this.ownPools) await this.pools.close();
    if (this.ownHashes) await this.hashes.close();
    await this.suffix?.close();
  }
}
