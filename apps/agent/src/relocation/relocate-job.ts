import type { Logger } from 'pino';
import type { RelocateJobPayload, RelocationCommitResponse } from '@freeloader/protocol';
import { DonorPools } from '../client/donor-pool.js';
import type { JobHandler } from '../jobs/job-runner.js';
import type { ManagerClient } from '../manager-client.js';
import type { MorselStore } from '../store/store.js';
import type { RelocationTracker } from './relocation-tracker.js';

/** Morsel PUTs in flight per relocate job. */
const PUSH_IN_FLIGHT = 4;
/** Progress reports at most this often (milliseconds). */
const REPORT_EVERY_MS = 500;

export interface RelocateDeps {
  store: MorselStore;
  manager: ManagerClient;
  tracker: RelocationTracker;
}

/**
 * Run a `relocate` job: push each listed morsel to the donor the manager named (verified by the
 * receiver against the hash we send), ask the manager to commit the new placement, and free the
 * local copies only after `graceMs`, so a reader still holding the old map keeps finding them.
 */
export function relocateJobHandler(deps: RelocateDeps): JobHandler {
  return async (job, ctx) => {
    const p = job.payload as unknown as RelocateJobPayload;
    const total = p.moves.reduce((s, m) => s + m.morsels.length, 0) * p.morselSize;
    const pools = new DonorPools(2);
    let done = 0;
    let committed = false;
    let reported = performance.now();
    deps.tracker.progress(job.id, 0, total);
    try {
      for (const move of p.moves) {
        await forEachLimited(move.morsels, PUSH_IN_FLIGHT, async (index) => {
          const { data, sha256 } = await deps.store.get(p.datasetId, index);
          await pools.putMorsel(
            move.url,
            p.datasetId,
            index,
            data,
            sha256,
            p.writeCapability,
            ctx.signal,
          );
          done += data.length;
          deps.tracker.progress(job.id, done, total);
          if (performance.now() - reported >= REPORT_EVERY_MS) {
            reported = performance.now();
            await ctx.progress({ doneBytes: done }).catch(() => undefined);
          }
        });
      }
      await ctx.progress({ doneBytes: done }).catch(() => undefined);
      const result = await deps.manager.request<RelocationCommitResponse>(
        'POST',
        `/relocations/${job.id}/commit`,
        {},
      );
      committed = true;
      const moved = p.moves.flatMap((m) => m.morsels);
      freeLater(deps.store, p.datasetId, moved, p.graceMs, ctx.log);
      deps.tracker.finished(job.id);
      return { movedMorsels: result.movedMorsels, movedBytes: result.movedBytes };
    } catch (e) {
      deps.tracker.failed(e instanceof Error ? e.message : String(e));
      // Give the targets' reserved space back; what reached them is dropped at their next
      // reconciliation, since placement never named them.
      if (!committed) {
        await deps.manager
          .request('POST', `/relocations/${job.id}/abort`, {})
          .catch(() => undefined);
      }
      throw e;
    } finally {
      await pools.close();
    }
  };
}

/** Run `fn` over `items` with at most `limit` at once; the first failure rejects. */
async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Free moved morsels after the grace period; the whole dataset when nothing of it stays here.
 * A restart before then leaves them until the next reconciliation; nothing reads them anyway.
 */
function freeLater(
  store: MorselStore,
  datasetId: string,
  morsels: number[],
  graceMs: number,
  log: Logger,
): void {
  const free = async (): Promise<void> => {
    const held = await store.stat(datasetId).catch(() => undefined);
    if (!held) return;
    const moving = new Set(morsels);
    if (held.indices.every((i) => moving.has(i))) {
      await store.free(datasetId);
    } else {
      for (const i of morsels) await store.free(datasetId, i);
    }
    log.info({ dataset: datasetId, morsels: morsels.length }, 'relocated morsels freed');
  };
  const timer = setTimeout(() => {
    free().catch((e: unknown) => log.warn({ err: String(e) }, 'freeing relocated morsels failed'));
  }, graceMs);
  timer.unref();
}
