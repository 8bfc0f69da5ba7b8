import type { JobView } from '@freeloader/protocol';
import type { DataKeys } from '../repositories/dataset-keys.js';

/**
 * A claimed job as its agent receives it: an import (which seals what it stores) or a repair
 * (which seals what it must re-read from the source) of an encrypted dataset carries the
 * dataset's key. Added here, on the authenticated answer to the claiming agent, so the job row
 * never holds a key in clear; other jobs, and datasets stored in clear, go unchanged.
 *
 * @example await withDataKey(app.dataKeys, importJob) // → { ...importJob, payload: { ..., dataKey } }
 */
export async function withDataKey(keys: Pick<DataKeys, 'get'>, job: JobView): Promise<JobView> {
  if (job.kind !== 'import' && job.kind !== 'repair') return job;
  const datasetId = job.kind === 'repair' ? job.payload.datasetId : job.datasetId;
  if (!datasetId) return job;
  const key = await keys.get(datasetId);
  if (!key) return job;
  const dataKey = key.toString('base64');
  return job.kind === 'import'
    ? { ...job, payload: { ...job.payload, dataKey } }
    : { ...job, payload: { ...job.payload, dataKey } };
}
