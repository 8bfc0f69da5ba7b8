import type { RelocateJobPayload, RelocationCommitResponse } from '@freeloader/protocol';
import { DonorPools } from '../client/donor-pool.js';
import type { AdmitTransfer } from '../governor/governance.js';
import type { JobHandler } from './job-runner.js';
import type { ManagerClient } from '../manager-client.js';
import type { MorselStore } from '../store/store.js';
import type { RelocationTracker } from '../relocation/relocation-tracker.js';
import { READER_MAP_LIFETIME_MS, type RetiringStore } from '../store/retiring-store.js';

/** Morsel PUTs in flight per relocate job. */
const PUSH_IN_FLIGHT = 4;
/** Progress reports at most this often (milliseconds). */
const REPORT_EVERY_MS = 500;

export interface RelocateDeps {
  store: MorselStore;
  manager: ManagerClient;
  tracker: RelocationTracker;
  /** Keeps moved morsels readable for readers of the old map (the daemon's store). */
  retire: RetiringStore['retire'];
  /** The governor's admission: pushes are paced with serving and wait out pauses. */
  admit?: AdmitTransfer;
}

/**
 * Run a `relocate` job: push each listed morsel to the donor the manager named (verified by the
 * receiver against the hash we send), ask the manager to commit the new placement, and retire
 * the local copies: a reader that fetched the map just before the commit may use it until its
 * capability expires, so they stay readable that long (or the manager's `graceMs`, if longer)
 * unless their space is needed first.
 */
export function relocateJobHandler(deps: RelocateDeps): JobHandler {
  return async (job, ctx) => {
    const p = job.payload as unknown as RelocateJobPayload;
    const total = p.moves.reduce((s, m) => s + m.morsels.length, 0) * p.morselSize;
    const pools = new DonorPools(2);
    let done = 0;
    let committed = false;
    const moved: Array<{ index: number; bytes: number }> = [];
    let reported = performance.now();
    deps.tracker.progress(job.id, 0, total);
    try {
      for (const move of p.moves) {
        await forEachLimited(move.morsels, PUSH_IN_FLIGHT, async (index) => {
          await deps.admit?.(p.morselSize, 'out', ctx.signal);
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
          moved.push({ index, bytes: data.length });
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
      const keepMs = Math.max(p.graceMs, READER_MAP_LIFETIME_MS);
      deps.retire(p.datasetId, moved, keepMs);
      ctx.log.info(
        { dataset: p.datasetId, morsels: moved.length, keepMs },
        'relocated morsels retired: readable until old maps expire, or their space is needed',
      );
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
