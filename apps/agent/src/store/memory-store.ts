import type {
  CreateDatasetOptions,
  LostMorsel,
  MorselStore,
  StoredDataset,
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
  datasetNotFound,
  morselNotFound,
  morselSizeConflict,
  normaliseSha256,
  rehash,
  sha256Hex,
} from './validate.js';

interface MemoryMorsel {
  data: Buffer;
  sha256: string;
}

interface MemoryDataset {
  morselSize: number;
  morsels: Map<number, MemoryMorsel>;
  bytes: number;
}

export interface MemoryStoreOptions {
  /** Default: Number.MAX_SAFE_INTEGER (no quota). */
  quotaBytes?: number;
}

/**
 * An in-memory {@link MorselStore} for other units' tests. It obeys the same conformance suite as
 * the filesystem store; nothing survives `close()`.
 *
 * @example const store = new MemoryStore({ quotaBytes: 64 * MiB });
 */
export class MemoryStore implements MorselStore {
  private readonly datasets = new Map<string, MemoryDataset>();
  private quota: number;
  private used = 0;

  constructor(opts: MemoryStoreOptions = {}) {
    const quota = opts.quotaBytes ?? Number.MAX_SAFE_INTEGER;
    assertQuotaValue(quota);
    this.quota = quota;
  }

  async create(datasetId: string, opts: CreateDatasetOptions): Promise<void> {
    assertDatasetId(datasetId);
    assertMorselSize(opts.morselSize);
    for (const i of opts.planned ?? []) assertIndex(i);
    const existing = this.datasets.get(datasetId);
    if (existing) {
      if (existing.morselSize !== opts.morselSize) {
        throw morselSizeConflict(datasetId, existing.morselSize, opts.morselSize);
      }
      return;
    }
    this.datasets.set(datasetId, { morselSize: opts.morselSize, morsels: new Map(), bytes: 0 });
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
    const actual = sha256Hex(data);
    assertHash(actual, expected, index);
    const old = ds.morsels.get(index);
    if (old?.sha256 === actual) return { sha256: actual };
    const delta = data.length - (old?.data.length ?? 0);
    assertQuota(this.used, delta, this.quota);
    // Copy: the caller may reuse its buffer.
    ds.morsels.set(index, { data: Buffer.from(data), sha256: actual });
    ds.bytes += delta;
    this.used += delta;
    return { sha256: actual };
  }

  async get(
    datasetId: string,
    index: number,
    into?: Buffer,
  ): Promise<{ data: Buffer; sha256: string }> {
    assertDatasetId(datasetId);
    assertIndex(index);
    const morsel = this.dataset(datasetId).morsels.get(index);
    if (!morsel) throw morselNotFound(datasetId, index);
    if (!into) return { data: morsel.data, sha256: morsel.sha256 };
    morsel.data.copy(into);
    return { data: into.subarray(0, morsel.data.length), sha256: morsel.sha256 };
  }

  async verify(datasetId: string, index: number): Promise<boolean> {
    return rehash(() => this.get(datasetId, index));
  }

  /** Memory holds nothing across opens, so nothing is ever lost at open. */
  drainLost(): LostMorsel[] {
    return [];
  }

  async free(datasetId: string, index?: number): Promise<void> {
    assertDatasetId(datasetId);
    if (index !== undefined) assertIndex(index);
    const ds = this.dataset(datasetId);
    if (index === undefined) {
      this.used -= ds.bytes;
      this.datasets.delete(datasetId);
      return;
    }
    const morsel = ds.morsels.get(index);
    if (!morsel) return;
    ds.morsels.delete(index);
    ds.bytes -= morsel.data.length;
    this.used -= morsel.data.length;
  }

  async list(): Promise<StoredDataset[]> {
    return [...this.datasets.entries()].map(([id, ds]) => summary(id, ds));
  }

  async stat(datasetId: string): Promise<StoredDatasetStat> {
    assertDatasetId(datasetId);
    const ds = this.dataset(datasetId);
    const indices = [...ds.morsels.keys()].sort((a, b) => a - b);
    return { ...summary(datasetId, ds), indices };
  }

  usage(): StoreUsage {
    return {
      quotaBytes: this.quota,
      usedBytes: this.used,
      freeBytes: Math.max(0, this.quota - this.used),
    };
  }

  setQuota(bytes: number): void {
    assertQuotaValue(bytes);
    this.quota = bytes;
  }

  async close(): Promise<void> {
    this.datasets.clear();
    this.used = 0;
  }

  private dataset(datasetId: string): MemoryDataset {
    const ds = this.datasets.get(datasetId);
    if (!ds) throw datasetNotFound(datasetId);
    return ds;
  }
}

function summary(datasetId: string, ds: MemoryDataset): StoredDataset {
  return { datasetId, morselSize: ds.morselSize, morsels: ds.morsels.size, bytes: ds.bytes };
}
