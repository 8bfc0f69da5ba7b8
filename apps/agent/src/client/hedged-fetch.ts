import { createHash } from 'node:crypto';
import { FreeLoaderError, isFreeLoaderError, type DatasetMap } from '@freeloader/protocol';
import { DONOR_STALL_TIMEOUT_MS, type DonorPools } from './donor-pool.js';
import { hedge, hedgeDelayMs } from './hedge.js';
import type { MorselLocator } from './morsel-locator.js';
import type { MorselSealing } from './morsel-sealing.js';
import type { ReadTrace } from './read-trace.js';
import { Semaphore } from './semaphore.js';
import { STALL_LATENCY_FACTOR, StallWatch, SWEEP_INTERVAL_MS } from './stall-watch.js';

/**
 * Requests on the wire per donor: one transferring, the next already asked for. Two, not three:
 * on the 12-donor LAN (donors together faster than the client's link) a third request let the
 * donors TCP favoured run further ahead, and the read ended on the others' tails: `get` at W=12
 * 111 MB/s with three, 113–114 with two (median of 6); loopback `get` was no slower.
 */
export const PER_DONOR_IN_FLIGHT = 2;

export interface DonorRate {
  bytes: number;
  /** Wall time with at least one request to this donor in flight (milliseconds). */
  busyMs: number;
}

export interface HedgedFetchOptions {
  map: DatasetMap;
  pools: DonorPools;
  /** The reader's ranking of copies: told about failures, stalls, drops and bad copies. */
  locator: MorselLocator;
  /** The durable copy, a hedge's backup when no other donor holds the morsel. */
  fromSource?: (start: number, end: number) => Promise<Buffer>;
  onDonorFailure?: (donorId: string, error: FreeLoaderError) => void;
  onBadCopy?: (donorId: string, index: number) => void;
  onDonorDropped?: (donorId: string, error: FreeLoaderError) => void;
  perDonorInFlight?: number;
  /** Set for an encrypted dataset: a backup's bytes are opened with it, the source's sealed first. */
  sealing?: MorselSealing;
  /** Records request-slot waits and requests on the wire (`get --trace`). */
  trace?: ReadTrace;
}

/** What one morsel's fetch needs: where it goes and how it is checked. */
export interface MorselFetch {
  index: number;
  length: number;
  /** Its SHA-256, hex. */
  expected: string;
  /** Where the primary request writes (the caller's slot or shared buffer). */
  target: Buffer;
  /**
   * Whether `target`'s first `length` bytes are the morsel (off the network thread): their
   * SHA-256 is `expected`, or for an encrypted dataset their AES-GCM tag checks (which opens
   * them in place).
   */
  verified: () => Promise<boolean>;
  signal?: AbortSignal;
  /** A request slot already held for this morsel's first donor ({@link HedgedFetch.reserve}). */
  reservation?: RequestReservation;
}

/**
 * One of a donor's request slots, taken before the morsel that will use it is chosen: a morsel
 * waiting for a slot is out of its queue, where an idle twin could no longer steal it. At W=12 on
 * the LAN the read's last 0.25–0.35 s had three donors each holding one such morsel behind two on
 * the wire while their twins sat idle (trace of a 512 MiB read, 4.94 s). `held` turns false once
 * a request uses it or it is given back.
 */
export interface RequestReservation {
  readonly donor: string;
  held: boolean;
}

/**
 * Hedged fetches of morsels from donor copies (issue 15 item 5), with the per-donor state they
 * need: request slots, delivery rates, latency and stalls (swept every SWEEP_INTERVAL_MS while
 * requests are out). Each copy in turn is asked; a request outstanding far longer than its
 * donor's recent latency is also asked of the next healthy copy (or the source), the first
 * verified answer wins, and a donor beaten by another copy or stalling repeatedly is left out
 * for a while (longer each time it does so again).
 */
export class HedgedFetch {
  private readonly donorUrl = new Map<string, string>();
  private readonly slots = new Map<string, Semaphore>();
  private readonly rates = new Map<string, DonorRate & { inFlight: number; since: number }>();
  private readonly stalls = new StallWatch(DONOR_STALL_TIMEOUT_MS);
  private sweeper: NodeJS.Timeout | undefined;
  private readonly hedgeCounts = { asked: 0, won: 0 };

  constructor(private readonly opts: HedgedFetchOptions) {
    for (const d of opts.map.donors) this.donorUrl.set(d.id, d.url);
  }

  /**
   * Wait for one of `donor`'s request slots and hold it for the next morsel asked of it with
   * this reservation; {@link unreserve} gives it back when no request used it.
   */
  async reserve(donor: string): Promise<RequestReservation> {
    await this.slot(donor).acquire();
    return { donor, held: true };
  }

  /** Give back a reservation no request used (nothing to do once one did). */
  unreserve(r: RequestReservation): void {
    if (!r.held) return;
    r.held = false;
    this.slot(r.donor).release();
  }

  /** Requests to `donor` on the wire or waiting for a slot. */
  queued(donor: string): number {
    const slot = this.slots.get(donor);
    return (slot?.inUse ?? 0) + (slot?.waiting ?? 0);
  }

  /** How long `donor`'s head-of-line morsel has been outstanding (milliseconds; 0 when idle). */
  headAgeMs(donor: string): number {
    return this.stalls.headAgeMs(donor, performance.now());
  }

  /** Bytes and busy time measured from `donor` in this read, when it was asked anything. */
  rate(donor: string): DonorRate | undefined {
    return this.rates.get(donor);
  }

  /** Observed per-donor delivery (for rate reports to the manager). */
  donorRates(): Map<string, DonorRate> {
    return new Map([...this.rates].map(([id, r]) => [id, { bytes: r.bytes, busyMs: r.busyMs }]));
  }

  /** Morsels asked of a second copy (or the source) because the first was slow, and won by it. */
  hedges(): { asked: number; won: number } {
    return { ...this.hedgeCounts };
  }

  /** TCP connection attempts the pools made to `donor` (by id). */
  connectionAttempts(donor: string): number {
    const url = this.donorUrl.get(donor);
    return url ? this.opts.pools.connectionAttempts(url) : 0;
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /**
   * Morsel `m` from `copies` in order, each hedged: the verified bytes (in `m.target` or a
   * backup's buffer copied there), or the last donor error when every copy failed (the caller
   * goes to the source). A donor that fails is demoted and reported.
   */
  async fromCopies(
    m: MorselFetch,
    copies: readonly string[],
  ): Promise<{ data: Buffer } | { lastError: FreeLoaderError | undefined }> {
    const { index, length, expected, target, verified, signal } = m;
    const { locator } = this.opts;
    let lastError: FreeLoaderError | undefined;
    /** Donors that already answered this morsel as a hedge's backup and failed. */
    const tried = new Set<string>();
    for (let i = 0; i < copies.length; i++) {
      const donor = copies[i]!;
      if (tried.has(donor)) continue;
      try {
        // A donor dropped while this morsel waited for it is skipped while another route is left.
        const skippable = !!this.opts.fromSource || i < copies.length - 1;
        let cancelled = false;
        const rank = locator.health(donor);
        const primary = async (): Promise<Buffer | null> => {
          // Skipped once it lost the hedge, or (another route left) it failed or was dropped
          // while this morsel waited for it: the next copy serves it instead.
          const data = await this.fromDonor(
            donor,
            index,
            length,
            target,
            () => {
              if (cancelled) return true;
              return skippable && (locator.isDropped(donor) || locator.health(donor) > rank);
            },
            m.reservation,
          );
          if (!data) return null;
          if (!(await verified())) throw this.badCopy(index, donor);
          return data;
        };
        const backupDonor = copies.slice(i + 1).find((d) => locator.health(d) < 1000);
        const backup = this.backupOf(backupDonor, tried, index, length, expected);
        const { value, by } = await hedge(
          primary,
          backup,
          hedgeDelayMs(this.stalls.latencyMs(donor), this.queued(donor)),
          () => {
            cancelled = true;
            this.opts.pools.abandon(
              this.donorUrl.get(donor)!,
              new FreeLoaderError(
                'TIMEOUT',
                `donor ${donor} lost a hedged request for morsel ${index}`,
              ),
            );
          },
        );
        if (!value) continue;
        if (by === 'primary') return { data: value };
        // The other route won: this donor goes behind it. Beaten by another copy, it is left out
        // for a while (DonorDrops: its twins serve, and it is asked again if it recovers);
        // beaten by the source, it is a stall (the source is the slow last resort, so only
        // stalls in a row drop it).
        this.hedgeCounts.won++;
        locator.failed(donor);
        if (backupDonor ? locator.drop(donor) : locator.stalled(donor)) {
          this.opts.onDonorDropped?.(
            donor,
            new FreeLoaderError(
              'TIMEOUT',
              `donor ${donor} lost a hedged request for morsel ${index} to ${backupDonor ?? 'the source'}`,
            ),
          );
        }
        value.copy(target);
        return { data: target.subarray(0, length) };
      } catch (e) {
        if (signal?.aborted) throw e;
        lastError = isFreeLoaderError(e) ? e : new FreeLoaderError('UNAVAILABLE', String(e));
        locator.failed(donor);
        this.opts.onDonorFailure?.(donor, lastError);
      }
    }
    return { lastError };
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
    const { sealing } = this.opts;
    const matches = async (data: Buffer): Promise<boolean> =>
      sealing
        ? sealing.openHere(index, data)
        : createHash('sha256').update(data).digest('hex') === expected;
    const source = this.opts.fromSource;
    if (!donor && !source) return undefined;
    return async () => {
      this.hedgeCounts.asked++;
      if (!donor) {
        const start = index * this.opts.map.dataset.morselSize;
        const data = await source!(start, start + length);
        if (sealing) {
          const own = Buffer.from(data); // the source's buffer is not ours to change
          sealing.seal(index, own);
          if (await matches(own)) return own;
        } else if (await matches(data)) return data;
        throw new FreeLoaderError(
          'HASH_MISMATCH',
          `morsel ${index} from the source failed its SHA-256 check`,
        );
      }
      try {
        const data = await this.fromDonor(donor, index, length, Buffer.allocUnsafe(length), () =>
          this.opts.locator.isDropped(donor),
        );
        if (!data) throw new FreeLoaderError('UNAVAILABLE', `donor ${donor} was dropped`);
        // A backup's bad copy is as bad as a primary's: reported the same way.
        if (!(await matches(data))) throw this.badCopy(index, donor);
        return data;
      } catch (e) {
        tried.add(donor);
        this.opts.locator.failed(donor);
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
    this.opts.locator.badCopy(index, donor);
    this.opts.onBadCopy?.(donor, index);
    return new FreeLoaderError(
      'HASH_MISMATCH',
      `morsel ${index} from donor ${donor} failed its SHA-256 check`,
    );
  }

  /**
   * Morsel `index` from `donor` into `target` (a slot of its own), or null when `skip()` says so;
   * on a slot `reservation` holds for this donor, else on one it waits for.
   */
  private async fromDonor(
    donor: string,
    index: number,
    length: number,
    target: Buffer,
    skip: () => boolean,
    reservation?: RequestReservation,
  ): Promise<Buffer | null> {
    const slot = this.slot(donor);
    const queued = performance.now();
    // A reserved slot's wait is the reserving worker's to trace (it chose the morsel after it).
    if (reservation?.held && reservation.donor === donor) reservation.held = false;
    else {
      await slot.acquire();
      this.opts.trace?.mark('queue', index, queued, { donor });
    }
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
      const { map, pools } = this.opts;
      const data = await pools.getMorsel(
        this.donorUrl.get(donor)!,
        map.dataset.id,
        index,
        length,
        map.capability,
        target,
      );
      rate.bytes += data.length;
      ok = true;
      this.opts.locator.delivered(donor);
      return data;
    } catch (e) {
      // Refused or unroutable: out for the rest of the read, whichever route of a hedge this was.
      if (this.opts.locator.unreachable(donor, e))
        this.opts.onDonorDropped?.(donor, e as FreeLoaderError);
      throw e;
    } finally {
      const now = performance.now();
      this.opts.trace?.mark('net', index, started, { donor });
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
      const dropped = this.opts.locator.stalled(donor);
      this.opts.pools.abandon(this.donorUrl.get(donor)!, error);
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
