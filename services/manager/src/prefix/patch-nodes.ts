import type { FastifyInstance } from 'fastify';
import type { PatchNode } from '@freeloader/protocol';

/** A storage donor serving less than this is idle enough to patch (bytes/s). */
export const IDLE_SERVING_RATE = 1e6;

export interface NodeCandidate {
  id: string;
  url: string;
  bandwidthOnly: boolean;
  /** Holds some of the dataset being read (it will be serving the prefix). */
  holder: boolean;
  servingRate: number;
}

/**
 * Order patching candidates as seed 002 §4.1 asks: agents that enrolled to give bandwidth only
 * first, then storage donors that are idle — not serving, and not holding the prefix the client
 * is about to read from them — then busier ones; ties by serving rate, then id.
 *
 * @example rankPatchNodes([storageIdle, bandwidthOnly]) // → [bandwidthOnly, storageIdle]
 */
export function rankPatchNodes(candidates: readonly NodeCandidate[]): NodeCandidate[] {
  const tier = (c: NodeCandidate): number => {
    if (c.bandwidthOnly) return 0;
    const idle = c.servingRate < IDLE_SERVING_RATE;
    if (idle && !c.holder) return 1;
    return idle ? 2 : 3;
  };
  return [...candidates].sort(
    (a, b) =>
      tier(a) - tier(b) ||
      a.servingRate - b.servingRate ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** Up to `width` live patching nodes for a read of `datasetId`, best first, none of `exclude`. */
export async function pickPatchNodes(
  app: FastifyInstance,
  datasetId: string,
  width: number,
  exclude: readonly string[] = [],
): Promise<PatchNode[]> {
  const { rows } = await app.pg.query<{ id: string; url: string; bandwidth_only: boolean }>(
    'SELECT id, url, bandwidth_only FROM agents WHERE revoked_at IS NULL',
  );
  const holders = new Set(await app.placementRepo.donorsOfDataset(datasetId));
  const skip = new Set(exclude);
  const live = rows
    .filter((r) => !skip.has(r.id) && app.softState.stateOf(r.id) === 'live')
    .map((r) => {
      const beat = app.softState.heartbeatOf(r.id);
      return {
        id: r.id,
        url: beat?.url ?? r.url,
        bandwidthOnly: r.bandwidth_only,
        holder: holders.has(r.id),
        servingRate: beat?.servingRate ?? 0,
      };
    });
  return rankPatchNodes(live)
    .slice(0, Math.max(0, width))
    .map((c) => ({ id: c.id, url: c.url }));
}
