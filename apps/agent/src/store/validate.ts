import { createHash } from 'node:crypto';
import {
  DatasetIdParam,
  FreeLoaderError,
  MAX_MORSEL_SIZE,
  MAX_MORSELS_PER_DATASET,
  MIN_MORSEL_SIZE,
} from '@freeloader/protocol';

/** The same pattern the wire schema uses, so a store can never see an id the service would not. */
const DATASET_ID = new RegExp(DatasetIdParam.pattern as string);
const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Dataset ids become file names, so only lowercase UUIDs pass: no path traversal is possible.
 *
 * @example assertDatasetId('../../etc/passwd') // throws VALIDATION_FAILED
 */
export function assertDatasetId(datasetId: string): void {
  if (typeof datasetId !== 'string' || !DATASET_ID.test(datasetId)) {
    throw new FreeLoaderError('VALIDATION_FAILED', 'dataset id must be a lowercase UUID');
  }
}

/** A morsel index: an integer in [0, MAX_MORSELS_PER_DATASET). */
export function assertIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_MORSELS_PER_DATASET) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `morsel index must be an integer in [0, ${MAX_MORSELS_PER_DATASET})`,
      { index },
    );
  }
}

/** A morsel size within the protocol limits. */
export function assertMorselSize(morselSize: number): void {
  if (
    !Number.isInteger(morselSize) ||
    morselSize < MIN_MORSEL_SIZE ||
    morselSize > MAX_MORSEL_SIZE
  ) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `morsel size must be an integer in [${MIN_MORSEL_SIZE}, ${MAX_MORSEL_SIZE}]`,
      { morselSize },
    );
  }
}

/** Morsel bytes must be non-empty and fit the dataset's morsel size. */
export function assertMorselLength(length: number, morselSize: number): void {
  if (length < 1 || length > morselSize) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `morsel length ${length} is outside [1, ${morselSize}]`,
      { length, morselSize },
    );
  }
}

/** Normalise an optional expected hash to lowercase hex; throws VALIDATION_FAILED if malformed. */
export function normaliseSha256(sha256Hex: string | undefined): string | undefined {
  if (sha256Hex === undefined) return undefined;
  const hex = sha256Hex.toLowerCase();
  if (!SHA256_HEX.test(hex)) {
    throw new FreeLoaderError('VALIDATION_FAILED', 'sha256 must be 64 hex digits');
  }
  return hex;
}

/** Throws HASH_MISMATCH when an expected hash was given and differs from the actual one. */
export function assertHash(actual: string, expected: string | undefined, index: number): void {
  if (expected !== undefined && expected !== actual) {
    throw new FreeLoaderError('HASH_MISMATCH', `morsel ${index} does not match its sha256`, {
      index,
      expected,
      actual,
    });
  }
}

/** SHA-256 of a buffer as lowercase hex. */
export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Throws NO_SPACE when `extra` more bytes would take usage past the quota. */
export function assertQuota(used: number, extra: number, quota: number): void {
  if (extra > 0 && used + extra > quota) {
    throw new FreeLoaderError(
      'NO_SPACE',
      `store quota exceeded: ${used} + ${extra} > ${quota} bytes`,
      { usedBytes: used, neededBytes: extra, quotaBytes: quota },
    );
  }
}

/** A quota is a non-negative integer byte count. */
export function assertQuotaValue(bytes: number): void {
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    throw new FreeLoaderError('VALIDATION_FAILED', 'quota must be a non-negative integer');
  }
}

export function datasetNotFound(datasetId: string): FreeLoaderError {
  return new FreeLoaderError('DATASET_NOT_FOUND', `dataset ${datasetId} is not stored here`, {
    datasetId,
  });
}

export function morselNotFound(datasetId: string, index: number): FreeLoaderError {
  return new FreeLoaderError(
    'MORSEL_NOT_FOUND',
    `morsel ${index} of ${datasetId} is not stored here`,
    {
      datasetId,
      index,
    },
  );
}

export function morselSizeConflict(datasetId: string, have: number, want: number): FreeLoaderError {
  return new FreeLoaderError(
    'CONFLICT',
    `dataset ${datasetId} exists with morsel size ${have}, not ${want}`,
    { datasetId, morselSize: have },
  );
}

/**
 * ENOSPC (the disk itself is full, whatever the quota says) becomes DISK_FULL; anything else is
 * returned unchanged.
 *
 * @example asDiskFull(Object.assign(new Error('no space'), { code: 'ENOSPC' })).code // → 'DISK_FULL'
 */
export function asDiskFull(err: unknown): unknown {
  if ((err as NodeJS.ErrnoException | undefined)?.code !== 'ENOSPC') return err;
  return new FreeLoaderError('DISK_FULL', `the disk under the store is full: ${String(err)}`);
}

/**
 * Whether stored bytes still match the hash recorded at put time (the scrub's check). A morsel
 * whose bytes cannot be read whole (INTERNAL from the store's get) is bad too.
 *
 * @example await rehash(() => store.get(id, 3)) // → true for an intact morsel
 */
export async function rehash(
  read: () => Promise<{ data: Buffer; sha256: string }>,
): Promise<boolean> {
  let got: { data: Buffer; sha256: string };
  try {
    got = await read();
  } catch (e) {
    if (e instanceof FreeLoaderError && e.code === 'INTERNAL') return false;
    throw e;
  }
  return sha256Hex(got.data) === got.sha256;
}
