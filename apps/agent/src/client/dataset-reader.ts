import { createHash } from 'node:crypto';
import {
  FreeLoaderError,
  isFreeLoaderError,
  morselCount,
  morselLength,
  type DatasetMap,
} from '@freeloader/protocol';
import { DONOR_STALL_TIMEOUT_MS, DonorPools } from './donor-pool.js';
import { hedge, hedgeDelayMs } from './hedge.js';
import { HashPool, type SharedMemory } from './hash-pool.js';
import { MorselLocator, placeNodes } from './morsel-locator.js';
import { MorselSealing } from './morsel-sealing.js';
import { MorselSlab } from './morsel-slab.js';
import { Semaphore } from './semaphore.js';
import { STALL_LATENCY_FACTOR, StallWatch, SWEEP_INTERVAL_MS } from './stall-watch.js';
import { SuffixReader } from './suffix-reader.js';

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
  /** Morsel buffers (slots) this reader may hold at once: bounds its memory. */
  slabSlots?: number;
  /** Donors an earlier reader of the same read dropped for stalling (the mount's map refresh). */
  dropped?: Iterable<string>;
  /** Told once when a donor is dropped for the rest of the read (it stalled repeatedly). */
  onDonorDropped?: (donorId: string, error: FreeLoaderError) => void;
}

/** Morsels read ahead per donor beyond the one in flight (window sizing). */
export const READ_AHEAD_PER_DONOR = 4;
/**
 * Requests on the wire per donor: one transferring, the next already asked for. Two, not three:
 * on the 12-donor LAN (donors together faster than the client's link) a third request let the
 * donors TCP favoured run further ahead, and the read ended on the others' tails: `get` at W=12
 * 111 MB/s with three, 113–114 with two (median of 6); loopback `get` was no slower.
 */
export const PER_DONOR_IN_FLIGHT = 2;

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

export interface DonorRate {
  bytes: number;
  /** Wall time with at least one request to this donor in flight (milliseconds). */
  busyMs: number;
}

/**
 * Reads a dataset's morsels from its donors with verified hashes. `readMorsel` serves random
 * access (the mount); `morsels()` streams in order with a bounded window (the `get` command).
 * A donor that fails is reported, demoted for the rest of the read, and the morsel is fetched from
 * another copy or, last, from the source by Range — so the bytes are right or the read fails loudly.
 * Donors the map does not call live are not contacted at all; a donor whose head-of-line morsel
 * waits far longer than its recent latency ({@link StallWatch}, checked by one periodic sweep)
 * has its outstanding morsels re-requested elsewhere, and after repeated stalls is dropped.
 */
export class DatasetReader {
  readonly count: number;
  private readonly donorUrl = new Map<string, string>();
  private readonly slots = new Map<string, Semaphore>();
  private readonly rates = new Map<string, DonorRate & { inFlight: number; since: number }>();
  private readonly pools: DonorPools;
  private readonly ownPools: boolean;
  private readonly hashes: HashPool;
  /** Set for an encrypted dataset: seals source bytes, opens verified morsels. */
  private readonly sealing: MorselSealing | undefined;
  private readonly ownHashes: boolean;
  private readonly slab: MorselSlab;
  /** The uncached suffix, patched by patching nodes (seed 002), when the map has a plan. */
  private readonly suffix: SuffixReader | undefined;
  /** Decides, per morsel, between donor copies, a patching node and the source. */
  private readonly locator: MorselLocator;
  /** Per-donor latency and stalls; swept every SWEEP_INTERVAL_MS while requests are out. */
  private readonly stalls = new StallWatch(DONOR_STALL_TIMEOUT_MS);
  private sweeper: NodeJS.Timeout | undefined;
  private readonly hedgeCounts = { asked: 0, won: 0 };

  constructor(
    readonly map: DatasetMap,
    private readonly opts: ReaderOptions = {},
  ) {
    this.count = morselCount(map.dataset.sizeBytes, map.dataset.morselSize);
    for (const d of map.donors) this.donorUrl.set(d.id, d.url);
    this.ownPools = !opts.pools;
    this.pools = opts.pools ?? new DonorPools();
    this.ownHashes = !opts.hashes;
    this.hashes = opts.hashes ?? new HashPool();
    this.sealing = MorselSealing.of(map);
    this.suffix = map.suffix ? new SuffixReader(map, map.suffix) : undefined;
    this.locator = new MorselLocator(map, this.suffix, {
      sourceBacked: !!opts.fromSource,
      wait: (d) => this.expectedWait(d),
    });
    for (const d of opts.dropped ?? []) this.locator.drop(d);
    this.slab = new MorselSlab(opts.slabSlots ?? this.defaultWindow() + 8, map.dataset.morselSize);
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
   * A donor's delivery rate for choosing between copies (bytes/s): measured in this read once it
   * was busy MEASURED_RATE_MIN_BUSY_MS, else the manager's prediction, else 0 (unknown: all
   * unknown donors count as equally fast).
   */
  donorRate(donor: string): number {
    const r = this.rates.get(donor);
    if (r && r.busyMs >= MEASURED_RATE_MIN_BUSY_MS) return (r.bytes / r.busyMs) * 1000;
    return this.locator.predictedRate(donor) ?? 0;
  }

  /** Seconds (or, rates unknown, requests) until a new request to `donor` would be answered. */
  private expectedWait(donor: string): number {
    const slot = this.slots.get(donor);
    const queued = (slot?.inUse ?? 0) + (slot?.waiting ?? 0) + 1;
    const rate = this.donorRate(donor);
    if (!(rate > 0)) return queued;
    // A donor whose head-of-line morsel is already late (frozen, overloaded) is that much later.
    const late = this.stalls.headAgeMs(donor, performance.now()) / 1000;
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
   * Morsels [from, to) in order, each in a slab slot the consumer must `release()` once it has
   * used the bytes. At most `window` morsels are in flight or buffered (the slab bounds memory),
   * so fast donors run ahead while a slow one catches up.
   */
  async *morsels(
    from = 0,
    to = this.count,
    window = this.defaultWindow(),
    signal?: AbortSignal,
  ): AsyncGenerator<Morsel> {
    const pending = new Map<number, Promise<Morsel>>();
    let launched = from;
    const fill = (next: number): void => {
      while (launched < to && launched < next + window) {
        const p = this.readIntoSlot(launched, signal);
        p.catch(() => undefined); // observed when its turn comes
        pending.set(launched++, p);
      }
    };
    try {
      for (let next = from; next < to; next++) {
        fill(next);
        const morsel = await pending.get(next)!;
        pending.delete(next);
        yield morsel;
      }
    } finally {
      // An abandoned read gives its slots back as the outstanding fetches land.
      for (const p of pending.values())
        void p.then(
          (m) => m.release(),
          () => undefined,
        );
      pending.clear();
    }
  }

  /**
   * Fetch and verify one morsel into a slab slot: donors in order of health, then the source.
   * `prefer` is asked first when it holds a copy as healthy as the best (the donor whose queue
   * the morsel was spread to).
   */
  async readIntoSlot(index: number, signal?: AbortSignal, prefer?: string): Promise<Morsel> {
    this.checkIndex(index);
    const slot = await this.slab.acquire();
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
    prefer?: string,
  ): Promise<Buffer> {
    const { sizeBytes, morselSize, id } = this.map.dataset;
    const length = morselLength(sizeBytes, morselSize, index);
    if (target.length < length) throw new RangeError(`morsel ${index} needs ${length} bytes`);
    const expected = this.map.hashes.slice(index * 64, index * 64 + 64);
    const hash = (): Promise<string> => this.hashes.hashSlot(shared, offset, length);
    // Encrypted: the AES-GCM tag check (which opens the bytes in place) stands for the SHA-256.
    const verified = async (): Promise<boolean> =>
      this.sealing
        ? this.sealing.open(this.hashes, shared, offset, length, index)
        : (await hash()) === expected;
    const place = this.locator.locate(index);
    // The uncached suffix comes from the patching nodes, verified by the suffix reader.
    if (place.kind === 'patching') {
      return this.suffix!.readVerified(index, length, expected, target, hash, signal);
    }
    let lastError: FreeLoaderError | undefined;
    const copies = place.kind === 'donors' ? [...place.copies] : [];
    const at = prefer ? copies.indexOf(prefer) : -1;
    if (at > 0 && this.locator.health(prefer!) === this.locator.health(copies[0]!)) {
      copies.splice(at, 1);
      copies.unshift(prefer!);
    }
    /** Donors that already answered this morsel as a hedge's backup and failed. */
    const tried = new Set<string>();
    for (let i = 0; i < copies.length; i++) {
      const donor = copies[i]!;
      if (tried.has(donor)) continue;
      try {
        // A donor dropped while this morsel waited for it is skipped while another route is left.
        const skippable = !!this.opts.fromSource || i < copies.length - 1;
        let cancelled = false;
        const rank = this.locator.health(donor);
        const primary = async (): Promise<Buffer | null> => {
          // Skipped once it lost the hedge, or (another route left) it failed or was dropped
          // while this morsel waited for it: the next copy serves it instead.
          const data = await this.fromDonor(donor, id, index, length, target, () => {
            if (cancelled) return true;
            return (
              skippable && (this.locator.isDropped(donor) || this.locator.health(donor) > rank)
            );
          });
          if (!data) return null;
          if (!(await verified())) throw this.badCopy(index, donor);
          return data;
        };
        const backupDonor = copies.slice(i + 1).find((d) => this.locator.health(d) < 1000);
        const backup = this.backupOf(backupDonor, tried, index, length, expected);
        const ahead = (this.slots.get(donor)?.inUse ?? 0) + (this.slots.get(donor)?.waiting ?? 0);
        const { value, by } = await hedge(
          primary,
          backup,
          hedgeDelayMs(this.stalls.latencyMs(donor), ahead),
          () => {
            cancelled = true;
            this.pools.abandon(
              this.donorUrl.get(donor)!,
              new FreeLoaderError(
                'TIMEOUT',
                `donor ${donor} lost a hedged request for morsel ${index}`,
              ),
            );
          },
        );
        if (!value) continue;
        if (by === 'primary') return value;
        // The other route won: this donor goes behind it. Beaten by another copy, it is dropped
        // for the rest of the read (its twin serves); beaten by the source, it is a stall (the
        // source is the slow last resort, so only repeated losses drop it).
        this.hedgeCounts.won++;
        this.locator.failed(donor);
        const beaten = new FreeLoaderError(
          'TIMEOUT',
          `donor ${donor} lost a hedged request for morsel ${index} to ${backupDonor ?? 'the source'}`,
        );
        if (backupDonor && !this.locator.isDropped(donor)) {
          this.locator.drop(donor);
          this.opts.onDonorDropped?.(donor, beaten);
        } else if (!backupDonor && this.locator.stalled(donor)) {
          this.opts.onDonorDropped?.(donor, beaten);
        }
        value.copy(target);
        return target.subarray(0, length);
      } catch (e) {
        if (signal?.aborted) throw e;
        lastError = isFreeLoaderError(e) ? e : new FreeLoaderError('UNAVAILABLE', String(e));
        this.locator.failed(donor);
        this.opts.onDonorFailure?.(donor, lastError);
      }
    }
    if (this.opts.fromSource) {
      const start = index * morselSize;
      const bytes = await this.opts.fromSource(start, start + length);
      bytes.copy(target);
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

  /**
   * The second request of a hedge (issue 15): morsel `index` from `donor`'s copy, else from the
   * source, into a buffer of its own, verified here; undefined when there is no other route.
   * A backup donor that fails is noted in `tried` (and demoted) so the caller does not ask it again.
   */
  private backupOf(
    donor: string | undefined,
    tried: Set<string>,
    index: number,
    length: number,
    expected: string,
  ): (() => Promise<Buffer>) | undefined {
    const matches = (data: Buffer): boolean =>
      this.sealing
        ? this.sealing.openHere(index, data)
        : createHash('sha256').update(data).digest('hex') === expected;
    const source = this.opts.fromSource;
    if (!donor && !source) return undefined;
    return async () => {
      this.hedgeCounts.asked++;
      if (!donor) {
        const start = index * this.map.dataset.morselSize;
        const data = await source!(start, start + length);
        if (this.sealing) {
          const own = Buffer.from(data); // the source's buffer is not ours to change
          this.sealing.seal(index, own);
          if (matches(own)) return own;
        } else if (matches(data)) return data;
        throw new FreeLoaderError(
          'HASH_MISMATCH',
          `morsel ${index} from the source failed its SHA-256 check`,
        );
      }
      try {
        const data = await this.fromDonor(
          donor,
          this.map.dataset.id,
          index,
          length,
          Buffer.allocUnsafe(length),
          () => this.locator.isDropped(donor),
        );
        if (!data) throw new FreeLoaderError('UNAVAILABLE', `donor ${donor} was dropped`);
        // A backup's bad copy is as bad as a primary's: reported the same way.
        if (!matches(data)) throw this.badCopy(index, donor);
        return data;
      } catch (e) {
        tried.add(donor);
        this.locator.failed(donor);
        if (isFreeLoaderError(e)) this.opts.onDonorFailure?.(donor, e);
        throw e;
      }
    };
  }

  /**
   * `donor` sent morsel `index` with a bad hash, from either route of a hedge: its stored copy is
   * bad, so this read never asks it for that morsel again and the manager is told
   * (`onBadCopy`); returns the error to throw.
   */
  private badCopy(index: number, donor: string): FreeLoaderError {
    this.locator.badCopy(index, donor);
    this.opts.onBadCopy?.(donor, index);
    return new FreeLoaderError(
      'HASH_MISMATCH',
      `morsel ${index} from donor ${donor} failed its SHA-256 check`,
    );
  }

  /** Morsels asked of a second copy (or the source) because the first was slow, and won by it. */
  hedges(): { asked: number; won: number } {
    return { ...this.hedgeCounts };
  }

  /**
   * Every morsel index, in the order an out-of-order read should ask for them: index order,
   * except that a patched suffix goes the way its patching nodes download it (seed 002).
   */
  readOrder(): number[] {
    return this.locator.readOrder(this.count);
  }

  /** Donors dropped for the rest of the read because they stalled repeatedly. */
  droppedDonors(): string[] {
    return this.locator.droppedDonors();
  }

  /** TCP connection attempts this reader's pools made to `donor` (by id). */
  connectionAttempts(donor: string): number {
    const url = this.donorUrl.get(donor);
    return url ? this.pools.connectionAttempts(url) : 0;
  }

  /** Observed per-donor delivery (for rate reports to the manager). */
  donorRates(): Map<string, DonorRate> {
    return new Map([...this.rates].map(([id, r]) => [id, { bytes: r.bytes, busyMs: r.busyMs }]));
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    if (this.ownPools) await this.pools.close();
    if (this.ownHashes) await this.hashes.close();
    await this.suffix?.close();
  }

  private async fromDonor(
    donor: string,
    dataset: string,
    index: number,
    length: number,
    target: Buffer,
    skip: () => boolean,
  ): Promise<Buffer | null> {
    const slot = this.slot(donor);
    await slot.acquire();
    if (skip()) {
      slot.release();
      return null;
    }
    const rate = this.rateOf(donor);
    const started = performance.now();
    if (rate.inFlight++ === 0) rate.since = started;
    this.stalls.started(donor, started);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
    let ok = false;
    try {
      const data = await this.pools.getMorsel(
        this.donorUrl.get(donor)!,
        dataset,
        index,
        length,
        this.map.capability,
        target,
      );
      rate.bytes += data.length;
      ok = true;
      return data;
    } finally {
      const now = performance.now();
      this.stalls.finished(donor, now, ok);
      if (--rate.inFlight === 0) rate.busyMs += now - rate.since;
      slot.release();
    }
  }

  /**
   * Re-route the morsels of every donor whose head-of-line morsel stalled: its requests fail with
   * TIMEOUT (each goes to the next copy or the source; a late answer is discarded unread, since it
   * would land in a slot the re-request now fills), and a donor that stalls again is dropped.
   */
  private sweep(): void {
    if (!this.stalls.busy) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      return;
    }
    const now = performance.now();
    for (const donor of this.stalls.stalled(now)) {
      const limit = this.stalls.thresholdMs(donor);
      const error = new FreeLoaderError(
        'TIMEOUT',
        `donor ${donor} stalled: a morsel outstanding over ${Math.round(limit)} ms ` +
          `(${STALL_LATENCY_FACTOR}× its recent p90 latency, or the floor)`,
      );
      const dropped = this.locator.stalled(donor);
      this.pools.abandon(this.donorUrl.get(donor)!, error);
      if (dropped) this.opts.onDonorDropped?.(donor, error);
    }
  }

  private slot(donor: string): Semaphore {
    let s = this.slots.get(donor);
    if (!s) {
      s = new Semaphore(this.opts.perDonorInFlight ?? PER_DONOR_IN_FLIGHT);
      this.slots.set(donor, s);
    }
    return s;
  }

  private rateOf(donor: string): DonorRate & { inFlight: number; since: number } {
    let r = this.rates.get(donor);
    if (!r) {
      r = { bytes: 0, busyMs: 0, inFlight: 0, since: 0 };
      this.rates.set(donor, r);
    }
    return r;
  }
}
