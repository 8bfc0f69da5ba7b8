import { FreeLoaderError, type ImportJobPayload, type JobView } from '@freeloader/protocol';
import { openSource, type SourceInfo } from '@freeloader/sources';
import { IMPORT_CONCURRENCY, type ImportDeps } from './import-deps.js';
import { jobOfKind } from './job-of-kind.js';
import type { JobContext, JobHandler } from './job-runner.js';
import { rangedImport } from './ranged-import.js';
import { streamImport } from './stream-import.js';

/**
 * The `import` job: this donor fetches the morsels the placement assigns to it from the source
 * with keep-alive Range requests (several in flight), hashes each as it lands, stores it durably
 * and reports hashes and progress. Any failure frees what this job stored: a dataset is
 * readable only when every donor finished, and never with mixed versions (reads carry If-Match).
 */
export function importJobHandler(deps: ImportDeps): JobHandler {
  return async (claimed: JobView, ctx: JobContext) => {
    const job = jobOfKind(claimed, 'import');
    const payload = job.payload;
    const datasetId = job.datasetId;
    if (!datasetId) throw new FreeLoaderError('BAD_REQUEST', 'import job without a dataset');
    const source = openSource(payload.source.uri, {
      connections: IMPORT_CONCURRENCY,
      allowFile: deps.allowFileUris ?? false,
      policy: deps.sourcePolicy,
    });
    const expect: SourceInfo = { ...payload.source };
    try {
      if (payload.mode === 'stream') {
        return await streamImport(deps, datasetId, payload, source, expect, ctx);
      }
      return await rangedImport(deps, { id: job.id, datasetId }, payload, source, expect, ctx);
    } catch (e) {
      // An extension's dataset is readable from the morsels below `extendsFrom`: keep them.
      if (payload.extendsFrom !== undefined) await freeExtension(deps, datasetId, payload);
      else await deps.store.free(datasetId).catch(() => undefined);
      throw e;
    } finally {
      await source.close().catch(() => undefined);
    }
  };
}

/**
 * Undo a failed extension on this donor: free the morsels the job was given (those at or above
 * `extendsFrom`), and the dataset itself if that leaves it empty (a donor new to it).
 */
async function freeExtension(
  deps: ImportDeps,
  datasetId: string,
  payload: ImportJobPayload,
): Promise<void> {
  const from = payload.extendsFrom ?? 0;
  try {
    const held = (await deps.store.stat(datasetId)).indices;
    for (const index of held.filter((i) => i >= from)) await deps.store.free(datasetId, index);
    if (held.every((i) => i >= from)) await deps.store.free(datasetId);
  } catch {
    // Nothing stored yet, or already freed: the manager's delete job is the backstop.
  }
}
