import type { Logger } from 'pino';
import {
  CAPABILITY_CLOCK_SKEW_S,
  CAPABILITY_TTL_S,
  FreeLoaderError,
  isFreeLoaderError,
} from '@freeloader/protocol';
import type {
  CreateDatasetOptions,
  LostMorsel,
  MorselStore,
  StoredDataset,
  StoredDatasetStat,
  StoreUsage,
} from './store.js';

/**
 * How long a reader may keep using a dataset map it fetched (milliseconds): its read capability
 * lives CAPABILITY_TTL_S, and donors accept it CAPABILITY_CLOCK_SKEW_S longer. A map fetched
 * just before a relocation commit still names the old donor until then.
 */
export const READER_MAP_LIFETIME_MS = (CAPABILITY_TTL_S + CAPABILITY_CLOCK_SKEW_S) * 1000;
/** How often expired copies are looked for and the disk is checked (milliseconds). */
export const RETIRED_SWEEP_MS = 10_000;

/** One morsel moved away from here, kept readable until `until` (monotonic ms). */
interface Retired {
  bytes: number;
  until: number;
}

export interface RetiringStoreOptions {
  /** Monotonic milliseconds (injectable for tests). */
  clock?: () => number;
  /**
   * True when the disk under the store runs short for the owner (checked at every sweep):
   * retired copies then go at once, whatever readers may still want.
   */
  diskShort?: () => Promise<boolean>;
  /** A put hit a full disk (DISK_FULL): the daemon tells the manager at once. */
  onDiskFull?: () => void;
  log?: Logger;
}

/**
 * A {@link MorselStore} that keeps morsels relocated to other donors ("retired") readable until
 * every reader that could still hold the old placement has had its capability expire — or until
 * their space is actually needed, whichever comes first. Retired morsels no longer count as
 * used (the manager's ledger moved them, and new placements may use the space); a put that
 * would not fit, or a disk running short, frees them oldest deadline first. Everything else is
 * the inner store's.
 *
 * @example
 *   const store = new RetiringStore(await FsStore.open(dir, { quotaBytes }));
 *   store.retire(datasetId, [{ index: 3, bytes: 1048576 }], READER_MAP_LIFETIME_MS);
 */
export class RetiringStore implements MorselStore {
  private readonly retired = new Map<string, Map<number, Retired>>();
  private retiredTotal = 0;
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | null = null;

  constructor(
    private readonly inner: MorselStore,
    private readonly opts: RetiringStoreOptions = {},
  ) {
    this.clock = opts.clock ?? (() => performance.now());
  }

  /** Sweep every `everyMs` in the background (the daemon); tests call {@link sweep} instead. */
  startSweeping(everyMs = RETIRED_SWEEP_MS): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.sweep().catch((e: unknown) =>
        this.opts.log?.warn({ err: String(e) }, 'freeing relocated morsels failed'),
      );
    }, everyMs);
    this.timer.unref();
  }

  /** Bytes kept for readers of an older placement (not counted as used). */
  get retiredBytes(): number {
    return this.retiredTotal;
  }

  /**
   * These morsels now live elsewhere: keep them readable for `keepMs`, then free them (sooner
   * when their space is needed). Morsels not held here are ignored.
   */
  retire(
    datasetId: string,
    morsels: ReadonlyArray<{ index: number; bytes: number }>,
    keepMs: number,
  ): void {
    const until = this.clock() + Math.max(0, keepMs);
    let of = this.retired.get(datasetId);
    if (!of) this.retired.set(datasetId, (of = new Map<number, Retired>()));
    for (const m of morsels) {
      const old = of.get(m.index);
      if (old) this.retiredTotal -= old.bytes;
      of.set(m.index, { bytes: m.bytes, until });
      this.retiredTotal += m.bytes;
    }
  }

  /** Free retired morsels whose readers are gone, or all of them when the disk runs short. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  create(datasetId: string, opts: CreateDatasetOptions): Promise<void> {
    return this.inner.create(datasetId, opts);
  }

  async put(
    datasetId: string,
    index: number,
    data: Buffer,
    sha256Hex?: string,
  ): Promise<{ sha256: string }> {
    // Placed here again (a relocation back): it is no longer retired, whatever the deadline.
    this.unretire(datasetId, index);
    await this.makeRoom(data.length);
    try {
      return await this.inner.put(datasetId, index, data, sha256Hex);
    } catch (e) {
      if (isFreeLoaderError(e) && e.code === 'DISK_FULL') this.opts.onDiskFull?.();
      // Concurrent puts raced for the room made above: make more and try once again.
      // A full disk (DISK_FULL) is helped by freeing retired copies just the same.
      const roomy = isFreeLoaderError(e) && (e.code === 'NO_SPACE' || e.code === 'DISK_FULL');
      if (!roomy || this.retiredTotal === 0) throw e;
      await this.reclaim(Infinity, 'space needed');
      return this.inner.put(datasetId, index, data, sha256Hex);
    }
  }

  get(datasetId: string, index: number, into?: Buffer): Promise<{ data: Buffer; sha256: string }> {
    return this.inner.get(datasetId, index, into);
  }

  /** The inner store's, when it has one (retired copies are never served). */
  get locate(): MorselStore['locate'] {
    return this.inner.locate?.bind(this.inner);
  }

  verify(datasetId: string, index: number): Promise<boolean> {
    return this.inner.verify(datasetId, index);
  }

  drainLost(): LostMorsel[] {
    return this.inner.drainLost();
  }

  async free(datasetId: string, index?: number): Promise<void> {
    if (index === undefined) this.forgetDataset(datasetId);
    else this.unretire(datasetId, index);
    await this.inner.free(datasetId, index);
  }

  list(): Promise<StoredDataset[]> {
    return this.inner.list();
  }

  stat(datasetId: string): Promise<StoredDatasetStat> {
    return this.inner.stat(datasetId);
  }

  usage(): StoreUsage {
    const u = this.inner.usage();
    const usedBytes = Math.max(0, u.usedBytes - this.retiredTotal);
    return {
      quotaBytes: u.quotaBytes,
      usedBytes,
      freeBytes: u.diskFull ? 0 : Math.max(0, u.quotaBytes - usedBytes),
      ...(u.diskFull ? { diskFull: true } : {}),
    };
  }

  setQuota(bytes: number): void {
    this.inner.setQuota(bytes);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => undefined);
    await this.inner.close();
  }

  private async sweepOnce(): Promise<void> {
    if (this.retiredTotal === 0) return;
    const short = await (this.opts.diskShort?.() ?? Promise.resolve(false)).catch(() => false);
    if (short) {
      await this.reclaim(Infinity, 'disk short');
      return;
    }
    const now = this.clock();
    for (const [datasetId, of] of [...this.retired]) {
      const due = [...of].filter(([, r]) => r.until <= now).map(([i]) => i);
      if (due.length > 0) await this.freeRetired(datasetId, due, 'readers of the old map are gone');
    }
  }

  /** Free retired morsels (soonest deadline first) until the inner store has room for `bytes`. */
  private async makeRoom(bytes: number): Promise<void> {
    if (this.retiredTotal === 0) return;
    const u = this.inner.usage();
    const missing = u.usedBytes + bytes - u.quotaBytes;
    if (missing > 0) await this.reclaim(missing, 'space needed');
  }

  private async reclaim(bytes: number, why: string): Promise<void> {
    const all = [...this.retired].flatMap(([datasetId, of]) =>
      [...of].map(([index, r]) => ({ datasetId, index, ...r })),
    );
    all.sort((a, b) => a.until - b.until);
    const pick = new Map<string, number[]>();
    let freed = 0;
    for (const r of all) {
      if (freed >= bytes) break;
      pick.set(r.datasetId, [...(pick.get(r.datasetId) ?? []), r.index]);
      freed += r.bytes;
    }
    for (const [datasetId, indices] of pick) await this.freeRetired(datasetId, indices, why);
  }

  /** Free retired morsels of one dataset; the dataset too once nothing of it is left here. */
  private async freeRetired(datasetId: string, indices: number[], why: string): Promise<void> {
    for (const i of indices) this.unretire(datasetId, i);
    try {
      for (const i of indices) await this.inner.free(datasetId, i);
      const left = await this.inner.stat(datasetId);
      if (left.indices.length === 0) await this.inner.free(datasetId);
    } catch (e) {
      // Deleted meanwhile (the dataset went away): nothing left to free.
      if (!(e instanceof FreeLoaderError && e.code === 'DATASET_NOT_FOUND')) throw e;
    }
    this.opts.log?.info(
      { dataset: datasetId, morsels: indices.length, why },
      'relocated morsels freed',
    );
  }

  private unretire(datasetId: string, index: number): void {
    const of = this.retired.get(datasetId);
    const r = of?.get(index);
    if (!of || !r) return;
    of.delete(index);
    this.retiredTotal -= r.bytes;
    if (of.size === 0) this.retired.delete(datasetId);
  }

  private forgetDataset(datasetId: string): void {
    for (const r of this.retired.get(datasetId)?.values() ?? []) this.retiredTotal -= r.bytes;
    this.retired.delete(datasetId);
  }
}
