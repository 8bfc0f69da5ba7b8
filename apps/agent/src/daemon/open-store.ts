import { join } from 'node:path';
import type { Logger } from 'pino';
import { checkQuotaFits, diskShort } from '../store/disk-space.js';
import { FsStore } from '../store/fs-store.js';
import { RetiringStore } from '../store/retiring-store.js';

export interface DonorStore {
  /** The files under the store (disk-full rechecks, morsels found lost at open). */
  fsStore: FsStore;
  /** The store every part of the daemon uses: relocated morsels stay readable until retired. */
  store: RetiringStore;
}

/**
 * Open the donor's morsel store under `dir/store` with its quota (0 for a bandwidth-only donor),
 * check that the disk can hold the quota beside the owner's floor, and start the retired-morsel
 * sweep. A store that does not fit is closed again (its lock released) before the error.
 *
 * @example
 *   const { store } = await openDonorStore({ dir, quotaBytes: 20 * GiB, logger, onDiskFull })
 */
export async function openDonorStore(opts: {
  dir: string;
  quotaBytes: number;
  bandwidthOnly?: boolean;
  logger: Logger;
  /** The disk filled up under a write (the manager should hear at once). */
  onDiskFull: () => void;
}): Promise<DonorStore> {
  const storeDir = join(opts.dir, 'store');
  const fsStore = await FsStore.open(storeDir, {
    quotaBytes: opts.bandwidthOnly ? 0 : opts.quotaBytes,
  });
  for (const w of fsStore.warnings) opts.logger.warn(w);
  const store: RetiringStore = new RetiringStore(fsStore, {
    log: opts.logger,
    diskShort: () => diskShort(storeDir, store.usage().freeBytes),
    onDiskFull: opts.onDiskFull,
  });
  try {
    if (!opts.bandwidthOnly) {
      await checkQuotaFits(storeDir, opts.quotaBytes, store.usage().usedBytes);
    }
  } catch (e) {
    await store.close();
    throw e;
  }
  store.startSweeping();
  return { fsStore, store };
}
