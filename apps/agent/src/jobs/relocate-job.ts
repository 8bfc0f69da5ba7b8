import type { RelocationCommitResponse } from '@freeloader/protocol';
import { DonorPools } from '../client/donor-pool.js';
import type { AdmitTransfer } from '../governor/governance.js';
import { forEachBounded } from './bounded-tasks.js';
import { jobOfKind } from './job-of-kind.js';
import type { JobHandler } from './job-runner.js';
import { ProgressReporter } from './progress-reporter.js';
import type { ManagerClient } from '../manager-client.js';
import type { MorselStore } from '../store/store.js';
import type { RelocationTracker } from '../relocation/relocation-tracker.js';
import { READER_MAP_LIFETIME_MS, type RetiringStore } from '../store/retiring-store.js';

/** Morsel PUTs in flight per relocate job. */
const PUSH_IN_FLIGHT = 4;

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
  return async (claimed, ctx) => {
    const job = jobOfKind(claimed, 'relocate');
    const p = job.payload;
    const total = p.moves.reduce((s, m) => s + m.morsels.length, 0) * p.morselSize;
    const pools = new DonorPools(2);
    // Bytes only: a relocation shows no rate or ETA in the console.
    const reporter = new ProgressReporter(ctx, { rate: false });
    let committed = false;
    const moved: Array<{ index: number; bytes: number }> = [];
    deps.tracker.progress(job.id, 0, total);
    try {
      for (const move of p.moves) {
        await forEachBounded(move.morsels, PUSH_IN_FLIGHT, async (index) => {
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
          moved.push({ index, bytes: data.length });
          reporter.add(data.length);
          deps.tracker.progress(job.id, reporter.doneBytes, total);
        });
      }
      // Progress is for the console: a manager that misses it must not fail the move.
      await reporter.flush().catch(() => undefined);
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
