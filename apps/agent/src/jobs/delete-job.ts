import { FreeLoaderError, isFreeLoaderError, type JobView } from '@freeloader/protocol';
import type { MorselStore } from '../store/store.js';
import type { JobHandler } from './job-runner.js';

/** The `delete` job: drop every morsel of a dataset (deleted, evicted, or a failed import). */
export function deleteJobHandler(store: MorselStore): JobHandler {
  return async (job: JobView) => {
    if (!job.datasetId) throw new FreeLoaderError('BAD_REQUEST', 'delete job without a dataset');
    try {
      await store.free(job.datasetId);
      return { freed: true };
    } catch (e) {
      // Already gone (never stored, or freed when its import failed) is what we wanted.
      if (isFreeLoaderError(e) && e.code === 'DATASET_NOT_FOUND') return { freed: false };
      throw e;
    }
  };
}
