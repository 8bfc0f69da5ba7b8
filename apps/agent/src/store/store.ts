/**
 * The agent's morsel store: one narrow interface (rclone-backend style: new/put/get/free/list/stat)
 * that every implementation obeys and that `conformance.ts` checks.
 *
 * Quota accounting: `usedBytes` is the sum of the lengths of the morsels the store holds (a short
 * last morsel counts its real length, not a full slot), plus the lengths of puts in flight so
 * concurrent puts cannot overshoot the quota together. Metadata (index logs, meta files) and the
 * unused tail of a slot are not counted.
 */

/** One dataset as the store holds it. */
export interface StoredDataset {
  datasetId: string;
  /** Bytes per full morsel (the last morsel of a dataset may be shorter). */
  morselSize: number;
  /** Morsels held. */
  morsels: number;
  /** Sum of the held morsels' lengths (bytes). */
  bytes: number;
}

/** {@link StoredDataset} plus the held morsel indices, sorted ascending. */
export interface StoredDatasetStat extends StoredDataset {
  indices: number[];
}

export interface StoreUsage {
  quotaBytes: number;
  usedBytes: number;
  /** `max(0, quotaBytes - usedBytes)`, or 0 while {@link diskFull}. */
  freeBytes: number;
  /**
   * A write hit ENOSPC: the disk is full whatever the quota says. Cleared when a later put
   * succeeds or the disk has room again (the filesystem store's `recheckDiskFull`).
   */
  diskFull?: boolean;
}

/** A morsel the store dropped at open because its bytes were gone (data file missing or short). */
export interface LostMorsel {
  datasetId: string;
  index: number;
}

export interface CreateDatasetOptions {
  morselSize: number;
  /**
   * The morsel indices this donor will hold. The filesystem store lays their slots out in index
   * order so a sequential read of the dataset is a sequential read of one file. Calling create
   * again with more indices adds slots for the new ones.
   */
  planned?: readonly number[];
}

/** A held morsel's bytes in an open file, lent by {@link MorselStore.locate}. */
export interface MorselSpan {
  fd: number;
  /** Byte offset of the morsel in the file. */
  position: number;
  length: number;
  /** The hash recorded at put time. */
  sha256: string;
  /** Exactly once, when done with the descriptor (it may be closed and reused after). */
  release: () => void;
}

export interface MorselStore {
  /**
   * new: declare a dataset. Idempotent for the same morselSize; a different morselSize for an
   * existing dataset throws CONFLICT. Throws VALIDATION_FAILED for a bad id, size or index.
   */
  create(datasetId: string, opts: CreateDatasetOptions): Promise<void>;
  /**
   * put: store morsel `index`. Durable and hash-checked before it becomes visible. Putting an index
   * again replaces it (same bytes: a cheap no-op). Throws HASH_MISMATCH (nothing becomes visible),
   * NO_SPACE (quota), DISK_FULL (the disk itself is full: usage() then says so), DATASET_NOT_FOUND, VALIDATION_FAILED (bad index, empty or longer than
   * morselSize, malformed hash).
   */
  put(
    datasetId: string,
    index: number,
    data: Buffer,
    sha256Hex?: string,
  ): Promise<{ sha256: string }>;
  /**
   * get: the morsel bytes and the hash recorded at put time (not recomputed). The buffer belongs
   * to the caller only for reading. With `into` (at least a morsel long) the bytes are read into
   * it and `data` is a view of it, so a server can reuse buffers instead of allocating one per
   * read. Throws MORSEL_NOT_FOUND / DATASET_NOT_FOUND.
   */
  get(datasetId: string, index: number, into?: Buffer): Promise<{ data: Buffer; sha256: string }>;
  /**
   * locate (only stores that keep morsels in files): where morsel `index`'s bytes are, in a file
   * descriptor kept open and a slot kept from reuse until `release()`, so a server can send them
   * (sendfile) without reading them into memory. The bytes are what get returns. Throws as get.
   */
  locate?(datasetId: string, index: number): Promise<MorselSpan>;
  /**
   * verify: read morsel `index` back and re-hash it (the scrub). False when the bytes no longer
   * match the hash recorded at put time or cannot be read whole; the caller decides what to do
   * (the scrub frees it and reports it). Throws MORSEL_NOT_FOUND / DATASET_NOT_FOUND.
   */
  verify(datasetId: string, index: number): Promise<boolean>;
  /**
   * Morsels dropped when the store opened because their data was missing or short (each is
   * returned once; the caller reports them). Never recreated as empty morsels that look valid.
   */
  drainLost(): LostMorsel[];
  /**
   * free: one morsel (a morsel not held is a no-op), or the whole dataset when index is omitted.
   * Releases quota. Throws DATASET_NOT_FOUND for an unknown dataset.
   */
  free(datasetId: string, index?: number): Promise<void>;
  list(): Promise<StoredDataset[]>;
  /** Throws DATASET_NOT_FOUND. */
  stat(datasetId: string): Promise<StoredDatasetStat>;
  usage(): StoreUsage;
  /** Lowering the quota below usedBytes is allowed: nothing is evicted, further puts fail. */
  setQuota(bytes: number): void;
  close(): Promise<void>;
}
