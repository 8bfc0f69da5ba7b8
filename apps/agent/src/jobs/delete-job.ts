import { FreeLoaderError, isFreeLoaderError, type JobView } from '@freeloader/protocol';
import type { MorselStore } from '../store/store.js';
import { jobOfKind } from './job-of-kind.js';
import type { JobHandler } from './job-runner.js';

/**
 * The `delete` job: drop every morsel of a dataset (deleted, evicted, or a failed import), or with
 * `payload.fromMorsel` only its tail from that morsel on (a trim), or with `payload.morsels` only
 * those (copies repair made surplus).
 */
export function deleteJobHandler(store: MorselStore): JobHandler {
  return async (claimed: JobView) => {
    const job = jobOfKind(claimed, 'delete');
    if (!job.datasetId) throw new FreeLoaderError('BAD_REQUEST', 'delete job without a dataset');
    try {
      // Eviction trimmed the tail (seed 002 §4.1): drop only the morsels from the cut on.
      const from = job.payload.fromMorsel;
      // Repair re-created these copies elsewhere (the donor came back, or held a bad copy).
      const only = job.payload.morsels;
      if (only) return { freed: await freeSome(store, job.datasetId, only) };
      if (typeof from === 'number') return { freed: await freeFrom(store, job.datasetId, from) };
      await store.free(job.datasetId);
      return { freed: true };
    } catch (e) {
      // Already gone (never stored, or freed when its import failed) is what we wanted.
      if (isFreeLoaderError(e) && e.code === 'DATASET_NOT_FOUND') return { freed: false };
      throw e;
    }
  };
}

/** Free the listed morsels this donor holds; returns how many it held. */
async function freeSome(
  store: MorselStore,
  datasetId: string,
  morsels: readonly number[],
): Promise<number> {
  const held = new Set((await store.stat(datasetId)).indices);
  const drop = morsels.filter((m) => held.has(m));
  for (const index of drop) await store.free(datasetId, index);
  return drop.length;
}

/** Free every held morsel of a dataset at index `from` or above; returns how many. */
async function freeFrom(store: MorselStore, datasetId: string, from: number): Promise<number> {
  const held = (await store.stat(datasetId)).indices.filter((i) => i >= from);
  for (const index of held) await store.free(datasetId, index);
  return held.length;
}
