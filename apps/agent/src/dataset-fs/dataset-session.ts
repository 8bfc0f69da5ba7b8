import {
  isFreeLoaderError,
  morselCount,
  morselLength,
  type DatasetMap,
} from '@freeloader/protocol';
import { DatasetReader } from '../client/dataset-reader.js';
import type { DonorPools } from '../client/donor-pool.js';
import type { HashPool, SharedMemory } from '../client/hash-pool.js';
import { fetchMap, mapHashesOf } from '../client/fetch-map.js';
import type { MapHashes } from '../client/map-hashes.js';
import { reportBadCopies, reportReadOutcome, type BadCopy } from '../client/report-rates.js';
import { sourceFallback } from '../client/source-fallback.js';
import type { ManagerClient } from '../manager-client.js';

export interface SessionDeps {
  manager: ManagerClient;
  /** Shared by every dataset of the mount: keep-alive connections to each donor. */
  pools: DonorPools;
  /** SHA-256 off the network thread, shared by every dataset of the mount. */
  hashes?: HashPool;
  /** Morsel requests in flight per donor (the reader's default otherwise). */
  perDonorInFlight?: number;
  log?: (message: string) => void;
}

/** Pauses between attempts of one morsel read once every donor and the source failed (ms). */
const RETRY_DELAYS_MS = [250, 1_000];
/** Refresh the capability this long before it expires at the latest (ms). */
const REFRESH_MARGIN_MS = 60_000;
/** A replaced reader is closed this long after, when reads that started on it are over (ms). */
const RETIRE_AFTER_MS = 60_000;

/**
 * One dataset as the mount reads it: its map and read capability (refreshed before expiry, so a
 * file open for hours keeps reading), a {@link DatasetReader} verifying every morsel's SHA-256
 * and falling back to other copies and then the source, and a few retries on top before a read
 * fails — the EIO an application sees means every route failed more than once.
 */
export class DatasetSession {
  readonly count: number;
  private reader: DatasetReader;
  private readonly fallback: ReturnType<typeof sourceFallback>;
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly failures: { donor: string; error: string }[] = [];
  private readonly badCopies: BadCopy[] = [];
  private closed = false;
  private mapHashes: MapHashes | undefined;

  private constructor(
    private map: DatasetMap,
    private readonly deps: SessionDeps,
  ) {
    this.count = morselCount(map.dataset.sizeBytes, map.dataset.morselSize);
    this.fallback = sourceFallback(map);
    this.reader = this.newReader(map);
    this.schedule();
  }

  /** Fetch the map and capability of dataset `id` and get ready to read it. */
  static async open(deps: SessionDeps, id: string): Promise<DatasetSession> {
    return new DatasetSession(await fetchMap(deps.manager, id), deps);
  }

  get id(): string {
    return this.map.dataset.id;
  }
  get size(): number {
    return this.map.dataset.sizeBytes;
  }
  get morselSize(): number {
    return this.map.dataset.morselSize;
  }
  /** Distinct donors of the primary copy. */
  get width(): number {
    return this.reader.width;
  }

  get window(): number {
    return this.reader.stripeWindow();
  }

  morselLength(index: number): number {
    return morselLength(this.map.dataset.sizeBytes, this.map.dataset.morselSize, index);
  }

  /**
   * Morsel `index`, verified, into the start of `into` (memory shared with the hash workers: one
   * buffer of the mount's cache); its length. Retried with a fresh map before giving up.
   */
  async readInto(index: number, into: SharedMemory): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      if (Date.parse(this.map.capabilityExpiresAt) - Date.now() < 5_000) await this.refresh();
      try {
        return await this.reader.readInto(index, into);
      } catch (e) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined || this.closed || !retryable(e)) throw e;
        this.deps.log?.(
          `morsel ${index} of ${this.map.dataset.path}: ${String((e as Error).message)}; retrying`,
        );
        await new Promise((r) => setTimeout(r, delay));
        // Donors may have moved or come back: ask the manager again.
        await this.refresh().catch(() => undefined);
      }
    }
  }

  /** Report what was seen to the manager and let go of the source. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.report(this.reader);
    await this.reader.close().catch(() => undefined);
    await this.fallback.close();
  }

  /** Fetch a new map (new capability, current donor states) and read through it from now on. */
  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const map = await fetchMap(this.deps.manager, this.map.dataset.id);
        const old = this.reader;
        this.map = map;
        this.reader = this.newReader(map);
        void this.report(old);
        setTimeout(() => void old.close().catch(() => undefined), RETIRE_AFTER_MS).unref();
      } finally {
        this.refreshing = undefined;
        this.schedule();
      }
    })();
    return this.refreshing;
  }

  private newReader(map: DatasetMap): DatasetReader {
    // A donor left out for stalling stays out across a refresh (for a first drop's time).
    const dropped = this.reader?.droppedNow() ?? [];
    // Hashes fetched for one map stay good for the next: a ready dataset's hashes never change.
    this.mapHashes ??= mapHashesOf(this.deps.manager, map);
    return new DatasetReader(map, {
      dropped,
      mapHashes: this.mapHashes,
      pools: this.deps.pools,
      ...(this.deps.hashes ? { hashes: this.deps.hashes } : {}),
      ...(this.deps.perDonorInFlight ? { perDonorInFlight: this.deps.perDonorInFlight } : {}),
      ...(this.fallback.read ? { fromSource: this.fallback.read } : {}),
      onDonorFailure: (donor, error) => {
        this.failures.push({ donor, error: error.code });
        this.deps.log?.(`donor ${donor}: ${error.message} (reading elsewhere)`);
      },
      onBadCopy: (donor, morsel) => this.badCopies.push({ donor, morsel }),
      onDonorDropped: (donor, error) => {
        // Stalled (for a while) or unreachable (refused, reset: for the session's reader).
        this.deps.log?.(`donor ${donor} left out of reads: ${error.message}`);
      },
    });
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.closed) return;
    const expires = Date.parse(this.map.capabilityExpiresAt);
    const ttl = expires - Date.now();
    const margin = Math.min(REFRESH_MARGIN_MS, ttl / 5);
    this.timer = setTimeout(
      () => {
        this.refresh().catch((e: unknown) => {
          this.deps.log?.(`refreshing the map of ${this.map.dataset.path} failed: ${String(e)}`);
          clearTimeout(this.timer);
          this.timer = setTimeout(() => void this.refresh().catch(() => undefined), 10_000);
          this.timer.unref();
        });
      },
      Math.max(1_000, ttl - margin),
    );
    this.timer.unref();
  }

  private async report(reader: DatasetReader): Promise<void> {
    const failed = this.failures.splice(0);
    await reportBadCopies(this.deps.manager, this.id, this.badCopies.splice(0)).catch(
      () => undefined,
    );
    await reportReadOutcome(this.deps.manager, this.id, reader.donorRates(), failed).catch(
      () => undefined,
    );
  }
}

/** A dataset that is gone or not ready will not come back by retrying; the network might. */
function retryable(e: unknown): boolean {
  if (!isFreeLoaderError(e)) return true;
  return !['DATASET_NOT_FOUND', 'DATASET_NOT_READY', 'VALIDATION_FAILED'].includes(e.code);
}
