import type { PatchNode } from '@freeloader/protocol';
import { donorsOfDataset } from '../repositories/placement.js';
import { patchNodeAgents } from '../repositories/prefix-patch-nodes.js';
import type { SoftState } from '../soft-state.js';
import type { PrefixDb } from './deps.js';

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

/** What picking patching nodes reads: the agents, and who is live and how busy. */
export interface PatchNodeDeps extends PrefixDb {
  softState: Pick<SoftState, 'stateOf' | 'heartbeatOf'>;
}

/** Up to `width` live patching nodes for a read of `datasetId`, best first, none of `exclude`. */
export async function pickPatchNodes(
  deps: PatchNodeDeps,
  datasetId: string,
  width: number,
  exclude: readonly string[] = [],
): Promise<PatchNode[]> {
  const rows = await patchNodeAgents(deps.pg);
  const holders = new Set(await donorsOfDataset(deps.pg, datasetId));
  const skip = new Set(exclude);
  const live = rows
    .filter((r) => !skip.has(r.id) && deps.softState.stateOf(r.id) === 'live')
    .map((r) => {
      const beat = deps.softState.heartbeatOf(r.id);
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
