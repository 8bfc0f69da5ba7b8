import { mkdir, statfs } from 'node:fs/promises';
import { FreeLoaderError, formatSize } from '@freeloader/protocol';

/** Free bytes available to an unprivileged writer on the file system holding `dir`. */
export async function diskFreeBytes(dir: string): Promise<number> {
  await mkdir(dir, { recursive: true });
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/** Disk space left to the owner beyond what the quota still promises FreeLoader (bytes). */
export const OWNER_DISK_FLOOR_BYTES = 1024 ** 3;

/**
 * The disk under `dir` is short: less is free than the store may still fill (`promisedBytes`,
 * the quota's unused part) plus OWNER_DISK_FLOOR_BYTES for the owner. Copies kept only as a
 * courtesy (relocated morsels awaiting their readers) must then go.
 *
 * @example await diskShort(storeDir, store.usage().freeBytes) // → false on a roomy disk
 */
export async function diskShort(dir: string, promisedBytes: number): Promise<boolean> {
  return (await diskFreeBytes(dir)) < promisedBytes + OWNER_DISK_FLOOR_BYTES;
}

/**
 * A donor cannot promise space its disk does not have: the quota may use what is free now plus
 * what the store already occupies.
 */
export async function checkQuotaFits(
  dir: string,
  quotaBytes: number,
  usedBytes: number,
): Promise<void> {
  const free = await diskFreeBytes(dir);
  if (quotaBytes > free + usedBytes) {
    throw new FreeLoaderError(
      'QUOTA_EXCEEDS_DISK',
      `quota ${formatSize(quotaBytes)} is larger than the free disk space at ${dir} ` +
        `(${formatSize(free + usedBytes)} available to FreeLoader); choose a smaller --quota`,
      { quotaBytes, availableBytes: free + usedBytes },
    );
  }
}
