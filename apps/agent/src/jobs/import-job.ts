import {
  FreeLoaderError,
  morselLength,
  morselsOfDonor,
  type ImportJobPayload,
  type JobView,
  type MorselHash,
} from '@freeloader/protocol';
import { openSource, type SourceInfo } from '@freeloader/sources';
import type { AdmitTransfer } from '../governor/governance.js';
import type { MorselStore } from '../store/store.js';
import type { JobContext, JobHandler } from './job-runner.js';
import { ProgressReporter } from './progress-reporter.js';
import { streamImport } from './stream-import.js';

/** Range requests in flight per importing donor: enough to hide the source's round trip. */
export const IMPORT_CONCURRENCY = 4;

export interface ImportDeps {
  store: MorselStore;
  agentId: () => string;
  allowFileUris?: boolean;
  /** The governor's admission: source reads wait their turn, and wait out pauses. */
  admit?: AdmitTransfer;
}

/**
 * The `import` job: this donor fetches the morsels the placement assigns to it from the source
 * with keep-alive Range requests (several in flight), hashes each as it lands, stores it durably
 * and reports hashes and progress. Any failure frees what this job stored: a dataset is
 * readable only when every donor finished, and never with mixed versions (reads carry If-Match).
 */
export function importJobHandler(deps: ImportDeps): JobHandler {
  return async (job: JobView, ctx: JobContext) => {
    const payload = job.payload as unknown as ImportJobPayload;
    const datasetId = job.datasetId;
    if (!datasetId) throw new FreeLoaderError('BAD_REQUEST', 'import job without a dataset');
    const source = openSource(payload.source.uri, {
      connections: IMPORT_CONCURRENCY,
      allowFile: deps.allowFileUris ?? false,
    });
    const expect: SourceInfo = { ...payload.source };
    try {
      if (payload.mode === 'stream') {
        return await streamImport(deps, datasetId, payload, source, expect, ctx);
      }
      return await rangedImport(deps, datasetId, payload, source, expect, ctx);
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

async function rangedImport(
  deps: ImportDeps,
  datasetId: string,
  payload: ImportJobPayload,
  source: ReturnType<typeof openSource>,
  expect: SourceInfo,
  ctx: JobContext,
): Promise<Record<string, unknown>> {
  const me = deps.agentId();
  const mine = [...new Set(payload.extents.flatMap((e) => morselsOfDonor(e, me)))].sort(
    (a, b) => a - b,
  );
  await deps.store.create(datasetId, { morselSize: payload.morselSize, planned: mine });
  const size = payload.source.size;
  const reporter = new ProgressReporter(ctx);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    // One morsel buffer per worker, reused: a 1 MiB allocation per morsel left agents at
    // 140–220 MB resident after a 1 GiB import (garbage the GC had no pressure to collect).
    const slot = Buffer.allocUnsafeSlow(payload.morselSize);
    while (next < mine.length && !failed) {
      ctx.signal.throwIfAborted();
      const index = mine[next++]!;
      const start = index * payload.morselSize;
      const end = start + morselLength(size, payload.morselSize, index);
      // Before the request: the owner feels bytes on the wire, not bytes already here.
      await deps.admit?.(end - start, 'in', ctx.signal);
      const data = await source.readRange(start, end, expect, ctx.signal, slot);
      // The store hashes while it writes; hashing here too doubled an import's CPU.
      const { sha256 } = await deps.store.put(datasetId, index, data);
      reporter.add(data.length, { index, sha256 } satisfies MorselHash);
    }
  };
  // Every worker stops before the job fails, so no put lands after the failure frees morsels.
  const settled = await Promise.allSettled(
    Array.from({ length: Math.min(IMPORT_CONCURRENCY, mine.length) }, () =>
      worker().catch((e: unknown) => {
        failed = true;
        throw e;
      }),
    ),
  );
  const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
  await reporter.flush();
  return { morsels: mine.length, bytes: reporter.doneBytes };
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
