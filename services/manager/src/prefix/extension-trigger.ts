import type { DatasetView } from '@freeloader/protocol';
import { extendingDatasetsOfDonor } from '../repositories/prefix-extensions.js';
import { recordRead } from '../repositories/read-stats.js';
import { abandonExtension, considerExtension, type ExtensionStartDeps } from './extend-prefix.js';
import { EXTEND_MIN_READS } from './extension-decision.js';

/**
 * After an import asked for the space extensions held, none starts for this long (ms): the
 * import gets to reserve what it freed before reads can claim free space again.
 */
export const YIELD_PAUSE_MS = 60_000;

export interface PrefixExtensions {
  /**
   * Count a read of `dataset` (its map was fetched) and, when the read may earn a partly cached
   * dataset a longer prefix, consider extending it in the background: the read never waits.
   */
  noteRead(
    dataset: Pick<DatasetView, 'id' | 'state' | 'sizeBytes' | 'cachedBytes' | 'sourceUri'>,
    who: string,
  ): Promise<void>;
  /** Abandon every extension a dead donor was importing for. */
  donorDied(agentId: string): Promise<void>;
  /**
   * An import may need space: start no extension for {@link YIELD_PAUSE_MS} and wait until the
   * consideration under way (if any) has recorded its extension or given its reservations back,
   * so the import sees every extension in flight (and may abandon them: they are opportunistic
   * and must never make an import evict other data).
   */
  hold(): Promise<void>;
  /** Resolves once the considerations queued so far are done (shutdown, tests). */
  idle(): Promise<void>;
}

/**
 * The read-driven trigger of prefix extension (issue 7). Considerations run one at a time, so
 * two of them never both count the same free space; a dataset is queued at most once.
 *
 * @example await app.prefixCache.extensions.noteRead(dataset, 'alice')
 */
export function createPrefixExtensions(deps: ExtensionStartDeps): PrefixExtensions {
  let chain: Promise<void> = Promise.resolve();
  const queued = new Set<string>();
  let pausedUntil = 0;
  return {
    async noteRead(dataset, who) {
      const score = await recordRead(deps.pg, dataset.id);
      const partial = dataset.cachedBytes < dataset.sizeBytes && dataset.sourceUri !== null;
      if (score === null || score <= EXTEND_MIN_READS - 1 || !partial) return;
      if (dataset.state !== 'ready' || queued.has(dataset.id)) return;
      if (Date.now() < pausedUntil) return;
      queued.add(dataset.id);
      chain = chain
        .then(async () => {
          if (Date.now() < pausedUntil) return;
          const decision = await considerExtension(deps, dataset.id, who);
          deps.log.debug({ dataset: dataset.id, decision }, 'prefix extension considered');
        })
        .catch((e: unknown) => deps.log.warn({ err: e }, 'considering a prefix extension failed'))
        .finally(() => queued.delete(dataset.id));
    },

    async donorDied(agentId) {
      for (const datasetId of await extendingDatasetsOfDonor(deps.pg, agentId)) {
        await abandonExtension(deps, datasetId, `donor ${agentId} died during the extension`);
      }
    },

    async hold() {
      pausedUntil = Date.now() + YIELD_PAUSE_MS;
      await chain;
    },

    idle: () => chain,
  };
}
