import type { FastifyInstance } from 'fastify';
import type { DatasetView } from '@freeloader/protocol';
import { abandonExtension, considerExtension } from './extend-prefix.js';
import { EXTEND_MIN_READS } from './extension-decision.js';
import { recordRead } from '../repositories/read-stats.js';

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
export function createPrefixExtensions(app: FastifyInstance): PrefixExtensions {
  let chain: Promise<void> = Promise.resolve();
  const queued = new Set<string>();
  let pausedUntil = 0;
  return {
    async noteRead(dataset, who) {
      const score = await recordRead(app.pg, dataset.id);
      const partial = dataset.cachedBytes < dataset.sizeBytes && dataset.sourceUri !== null;
      if (score === null || score <= EXTEND_MIN_READS - 1 || !partial) return;
      if (dataset.state !== 'ready' || queued.has(dataset.id)) return;
      if (Date.now() < pausedUntil) return;
      queued.add(dataset.id);
      chain = chain
        .then(async () => {
          if (Date.now() < pausedUntil) return;
          const decision = await considerExtension(app, dataset.id, who);
          app.log.debug({ dataset: dataset.id, decision }, 'prefix extension considered');
        })
        .catch((e: unknown) => app.log.warn({ err: e }, 'considering a prefix extension failed'))
        .finally(() => queued.delete(dataset.id));
    },

    async donorDied(agentId) {
      const { rows } = await app.pg.query<{ dataset_id: string }>(
        `SELECT DISTINCT j.dataset_id FROM jobs j JOIN datasets d ON d.id = j.dataset_id
         WHERE j.kind = 'import' AND j.state IN ('queued', 'running') AND j.agent_id = $1
           AND d.extension IS NOT NULL`,
        [agentId],
      );
      for (const { dataset_id } of rows) {
        await abandonExtension(app, dataset_id, `donor ${agentId} died during the extension`);
      }
    },

    async hold() {
      pausedUntil = Date.now() + YIELD_PAUSE_MS;
      await chain;
    },

    idle: () => chain,
  };
}
