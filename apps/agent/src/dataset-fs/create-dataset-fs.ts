import type { ManagerClient } from '../manager-client.js';
import { DatasetFs, type DatasetFsOptions } from './dataset-fs.js';
import { WorkerMorselSource } from './worker-morsel-source.js';

export interface CreateDatasetFsOptions extends Omit<DatasetFsOptions, 'source'> {
  manager: ManagerClient;
  /** Fetch on a worker thread (default, when built) or on the thread answering reads. */
  worker?: boolean;
}

/**
 * The reading layer as every front end wants it: morsels fetched and verified on a worker thread
 * when the compiled worker is there (not when running from TypeScript sources), else on this
 * thread. The FUSE mount uses it; an HTTP gateway would too, without touching `mount/`.
 *
 * @example
 *   const fs = createDatasetFs({ manager, cacheBytes: 256 * MiB });
 *   await fs.ready(); // then getattr / open / read / release
 */
export function createDatasetFs(opts: CreateDatasetFsOptions): DatasetFs {
  const { worker, ...rest } = opts;
  return new DatasetFs({
    ...rest,
    ...((worker ?? true) && WorkerMorselSource.available()
      ? {
          source: new WorkerMorselSource(opts.manager, opts.log ? { log: opts.log } : {}),
        }
      : {}),
  });
}
