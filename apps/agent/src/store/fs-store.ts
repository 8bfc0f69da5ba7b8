import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { FreeLoaderError } from '@freeloader/protocol';
import { diskFreeBytes } from './disk-space.js';
import { HandleCache, type HandleLease } from './fd-cache.js';
import {
  DATASETS_DIR,
  datasetPaths,
  syncDir,
  unlinkIfExists,
  writeFileAtomic,
  type DatasetMeta,
  type DatasetPaths,
} from './fs-layout.js';
import { recoverStore } from './fs-recovery.js';
import { LogAppender, type LogRecord } from './index-log.js';
import { SlotTable, type PlannedRun } from './slot-table.js';
import type {
  CreateDatasetOptions,
  MorselStore,
  StoredDataset,
  LostMorsel,
  MorselSpan,
  StoredDatasetStat,
  StoreUsage,
} from './store.js';
import {
  assertDatasetId,
  assertHash,
  assertIndex,
  assertMorselLength,
  assertMorselSize,
  assertQuota,
  assertQuotaValue,
  asDiskFull,
  datasetNotFound,
  morselNotFound,
  morselSizeConflict,
  normaliseSha256,
  rehash,
  sha256Hex,
} from './validate.js';
import { KeyedLock } from './keyed-lock.js';
import { readFully, writeFully } from './positional-io.js';

export interface FsStoreOptions {
  /** Default: Number.MAX_SAFE_INTEGER (no quota). */
  quotaBytes?: number;
  /** Most file handles kept open across datasets (two per hot dataset). Default 64. */
  maxOpenFiles?: number;
}

interface FsDataset {
  id: string;
  morselSize: number;
  paths: DatasetPaths;
  table: SlotTable;
  log: LogAppender;
  planned: PlannedRun[];
  /** False once the dataset is freed: in-flight work must not touch quota or report success. */
  live: boolean;
}

/**
 * The filesystem {@link MorselStore}: per dataset one data file of fixed-size slots (in planned
 * index order, so a dataset reads sequentially) and one append-only checksummed index log.
 * A put writes the slot with a positional write while hashing, fsyncs the data, then appends and
 * fsyncs its index record (group-committed per dataset); only then is the morsel visible.
 *
 * @example
 *   const store = await FsStore.open('/var/lib/freeloader/store', { quotaBytes: 100 * GiB });
 *   await store.create(id, { morselSize: MORSEL_SIZE, planned: [0, 4, 8] });
 *   await store.put(id, 4, bytes, sha);
 */
export class FsStore implements MorselStore {
  /** Problems recovery worked around at open (torn records, unreadable datasets). */
  readonly warnings: string[] = [];
  private readonly datasets = new Map<string, FsDataset>();
  private readonly lock = new KeyedLock();
  private readonly handles: HandleCache;
  private quota: number;
  private used = 0;
  private reserved = 0;
  private closed = false;
  /** A write hit ENOSPC: report no free space until space is given back or a put succeeds. */
  private diskFull = false;
  /** Morsels dropped at open because their bytes were gone (see {@link drainLost}). */
  private lost: LostMorsel[] = [];

  private constructor(
    private readonly datasetsDir: string,
    opts: FsStoreOptions,
  ) {
    const quota = opts.quotaBytes ?? Number.MAX_SAFE_INTEGER;
    assertQuotaValue(quota);
    this.quota = quota;
    this.handles = new HandleCache(opts.maxOpenFiles ?? 64);
  }

  /** Open (and recover) a store directory (created if missing); datasets live in `<dir>/datasets/`. */
  static async open(dir: string, opts: FsStoreOptions = {}): Promise<FsStore> {
    const datasetsDir = join(dir, DATASETS_DIR);
    await mkdir(datasetsDir, { recursive: true, mode: 0o700 });
    const store = new FsStore(datasetsDir, opts);
    await store.recover();
    return store;
  }

  async create(datasetId: string, opts: CreateDatasetOptions): Promise<void> {
    assertDatasetId(datasetId);
    assertMorselSize(opts.morselSize);
    for (const i of opts.planned ?? []) assertIndex(i);
    await this.lock.run(datasetId, async () => {
      const existing = this.datasets.get(datasetId);
      if (existing) {
        if (existing.morselSize !== opts.morselSize) {
          throw morselSizeConflict(datasetId, existing.morselSize, opts.morselSize);
        }
        const runs = existing.table.plan(opts.planned ?? []);
        if (runs.length > 0) {
          existing.planned.push(...runs);
          await this.writeMeta(existing);
        }
        return;
      }
      this.assertOpen();
      const paths = datasetPaths(this.datasetsDir, datasetId);
      // Truncate leftovers: a fresh dataset must never replay an older log.
      for (const path of [paths.data, paths.idx]) await (await open(path, 'w', 0o600)).close();
      const table = new SlotTable();
      const ds = this.track(
        datasetId,
        opts.morselSize,
        paths,
        table,
        table.plan(opts.planned ?? []),
        0,
      );
      await this.writeMeta(ds);
    });
  }

  async put(
    datasetId: string,
    index: number,
    data: Buffer,
    sha256?: string,
  ): Promise<{ sha256: string }> {
    assertDatasetId(datasetId);
    assertIndex(index);
    const expected = normaliseSha256(sha256);
    const ds = this.dataset(datasetId);
    assertMorselLength(data.length, ds.morselSize);
    const old = ds.table.entries.get(index);
    if (expected !== undefined && old?.sha256 === expected) {
      // A retried put of bytes already held: check them, skip the write.
      assertHash(sha256Hex(data), expected, index);
      return { sha256: expected };
    }

    const reservation = Math.max(0, data.length - (old?.length ?? 0));
    assertQuota(this.used + this.reserved, reservation, this.quota);
    this.reserved += reservation;
    const slot = ds.table.allocate(index);
    try {
      const lease = await this.handles.acquire(ds.paths.data);
      let actual: string;
      try {
        // Hash on this thread while the pool thread writes the same (read-only) bytes.
        const writing = writeFully(lease.fh, data, slot * ds.morselSize);
        actual = sha256Hex(data);
        await writing.catch((e: unknown) => this.failWrite(e));
        assertHash(actual, expected, index);
        if (ds.table.entries.get(index)?.sha256 === actual) return { sha256: actual };
        await lease.fh.datasync().catch((e: unknown) => this.failWrite(e));
      } finally {
        lease.release();
      }
      this.assertLive(ds);
      const rec: LogRecord = { kind: 'put', index, slot, length: data.length, sha256: actual };
      await ds.log.append(rec, () => this.apply(ds, rec)).catch((e: unknown) => this.failWrite(e));
      this.assertLive(ds);
      this.diskFull = false;
      return { sha256: actual };
    } finally {
      this.reserved -= reservation;
      ds.table.settle(slot);
    }
  }

  async get(
    datasetId: string,
    index: number,
    into?: Buffer,
  ): Promise<{ data: Buffer; sha256: string }> {
    const lent = await this.lend(datasetId, index);
    try {
      const { length, position, sha256 } = lent;
      if (into && into.length < length) {
        throw new FreeLoaderError('VALIDATION_FAILED', `buffer too small for morsel ${index}`);
      }
      const data = into ? into.subarray(0, length) : Buffer.allocUnsafe(length);
      if ((await readFully(lent.fh, data, position)) !== length) {
        throw new FreeLoaderError(
          'INTERNAL',
          `data file of ${datasetId} is shorter than its index`,
        );
      }
      return { data, sha256 };
    } finally {
      lent.release();
    }
  }

  async locate(datasetId: string, index: number): Promise<MorselSpan> {
    const { fh, ...span } = await this.lend(datasetId, index);
    return { fd: fh.fd, ...span };
  }

  /**
   * Morsel `index`'s place and an open handle to its data file; its slot is kept from reuse (a
   * free or re-put meanwhile takes another slot) and the handle open until `release`.
   */
  private async lend(
    datasetId: string,
    index: number,
  ): Promise<Omit<MorselSpan, 'fd'> & { fh: FileHandle }> {
    assertDatasetId(datasetId);
    assertIndex(index);
    const ds = this.dataset(datasetId);
    const entry = ds.table.entries.get(index);
    if (!entry) throw morselNotFound(datasetId, index);
    ds.table.startRead(entry.slot);
    let lease: HandleLease;
    try {
      lease = await this.handles.acquire(ds.paths.data);
    } catch (e) {
      ds.table.endRead(entry.slot);
      throw e;
    }
    let released = false;
    return {
      fh: lease.fh,
      position: entry.slot * ds.morselSize,
      length: entry.length,
      sha256: entry.sha256,
      release: () => {
        if (released) return;
        released = true;
        lease.release();
        ds.table.endRead(entry.slot);
      },
    };
  }

  async verify(datasetId: string, index: number): Promise<boolean> {
    return rehash(() => this.get(datasetId, index));
  }

  drainLost(): LostMorsel[] {
    return this.lost.splice(0);
  }

  /**
   * After DISK_FULL: once the disk under the store has `minFreeBytes` free again, report space
   * again. Returns whether the disk still counts as full.
   */
  async recheckDiskFull(minFreeBytes: number): Promise<boolean> {
    if (this.diskFull && (await diskFreeBytes(this.datasetsDir)) >= minFreeBytes) {
      this.diskFull = false;
    }
    return this.diskFull;
  }

  async free(datasetId: string, index?: number): Promise<void> {
    assertDatasetId(datasetId);
    if (index !== undefined) {
      assertIndex(index);
      const ds = this.dataset(datasetId);
      if (!ds.table.entries.has(index)) return;
      const rec: LogRecord = { kind: 'free', index };
      await ds.log.append(rec, () => this.apply(ds, rec));
      return;
    }
    await this.lock.run(datasetId, async () => {
      const ds = this.dataset(datasetId);
      ds.live = false;
      this.datasets.delete(datasetId);
      this.used -= ds.table.bytes;
      // The meta file goes first: without it the dataset no longer exists, even after a crash.
      await unlinkIfExists(ds.paths.meta);
      await syncDir(this.datasetsDir);
      for (const path of [ds.paths.data, ds.paths.idx]) {
        this.handles.drop(path);
        await unlinkIfExists(path);
      }
    });
  }

  async list(): Promise<StoredDataset[]> {
    return [...this.datasets.values()].map(summary);
  }

  async stat(datasetId: string): Promise<StoredDatasetStat> {
    assertDatasetId(datasetId);
    const ds = this.dataset(datasetId);
    const indices = [...ds.table.entries.keys()].sort((a, b) => a - b);
    return { ...summary(ds), indices };
  }

  usage(): StoreUsage {
    const used = this.used;
    if (this.diskFull)
      return { quotaBytes: this.quota, usedBytes: used, freeBytes: 0, diskFull: true };
    return { quotaBytes: this.quota, usedBytes: used, freeBytes: Math.max(0, this.quota - used) };
  }

  setQuota(bytes: number): void {
    assertQuotaValue(bytes);
    this.quota = bytes;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const ds of this.datasets.values()) ds.live = false;
    this.datasets.clear();
    await this.handles.closeAll();
  }

  private async recover(): Promise<void> {
    const found = await recoverStore(this.datasetsDir, (m) => this.warnings.push(m));
    for (const { id, paths, meta, table, logEnd, lost } of found) {
      this.track(id, meta.morselSize, paths, table, meta.planned, logEnd);
      this.used += table.bytes;
      for (const index of lost) this.lost.push({ datasetId: id, index });
    }
  }

  /** A write failed: ENOSPC marks the disk full and becomes DISK_FULL; rethrows either way. */
  private failWrite(err: unknown): never {
    const mapped = asDiskFull(err);
    if (mapped !== err) this.diskFull = true;
    throw mapped;
  }

  private track(
    id: string,
    morselSize: number,
    paths: DatasetPaths,
    table: SlotTable,
    planned: PlannedRun[],
    logEnd: number,
  ): FsDataset {
    const log = new LogAppender(() => this.handles.acquire(paths.idx), logEnd);
    const ds: FsDataset = { id, morselSize, paths, table, log, planned, live: true };
    this.datasets.set(id, ds);
    return ds;
  }

  private apply(ds: FsDataset, rec: LogRecord): void {
    const before = ds.table.bytes;
    ds.table.apply(rec);
    if (ds.live) this.used += ds.table.bytes - before;
  }

  private async writeMeta(ds: FsDataset): Promise<void> {
    const meta: DatasetMeta = {
      version: 1,
      datasetId: ds.id,
      morselSize: ds.morselSize,
      planned: ds.planned,
    };
    await writeFileAtomic(ds.paths.meta, JSON.stringify(meta));
  }

  private dataset(datasetId: string): FsDataset {
    this.assertOpen();
    const ds = this.datasets.get(datasetId);
    if (!ds) throw datasetNotFound(datasetId);
    return ds;
  }

  private assertLive(ds: FsDataset): void {
    if (!ds.live) throw datasetNotFound(ds.id);
  }

  private assertOpen(): void {
    if (this.closed) throw new FreeLoaderError('UNAVAILABLE', 'morsel store is closed');
  }
}

function summary(ds: FsDataset): StoredDataset {
  return {
    datasetId: ds.id,
    morselSize: ds.morselSize,
    morsels: ds.table.entries.size,
    bytes: ds.table.bytes,
  };
}
