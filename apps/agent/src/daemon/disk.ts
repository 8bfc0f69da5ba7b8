import { mkdir, statfs } from 'node:fs/promises';
import { FreeLoaderError, formatSize } from '@freeloader/protocol';

/** Free bytes available to an unprivileged writer on the file system holding `dir`. */
export async function diskFreeBytes(dir: string): Promise<number> {
  await mkdir(dir, { recursive: true });
  const s = await statfs(dir);
  return s.bavail * s.bsize;
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
