import type { DatasetMap, SuffixPlan, SuffixPlanRequest } from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';

/** Asks the manager for a new suffix plan (after a patching node failed). */
export type Replanner = (req: SuffixPlanRequest) => Promise<SuffixPlan>;

const replanners = new WeakMap<SuffixPlan, Replanner>();

/**
 * A partly cached dataset (seed 002): open a patch session for its uncached suffix at once, so
 * the patching nodes download it while the client reads the cached prefix, and put the plan in
 * `map.suffix`. The {@link DatasetReader} built on this map reads the suffix from the patching
 * nodes; the manager client is remembered with the plan so the reader can ask for a replacement
 * when a node dies. Fully cached datasets and those without a source are left alone.
 *
 * @example const map = await fetchMap(manager, 'climate/tas.nc'); // calls this for partial datasets
 */
export async function attachSuffixPlan(manager: ManagerClient, map: DatasetMap): Promise<void> {
  const { dataset } = map;
  if (dataset.cachedBytes >= dataset.sizeBytes || !dataset.sourceUri) return;
  const open: Replanner = (req) =>
    manager.request<SuffixPlan>('POST', `/datasets/${dataset.id}/patch`, req);
  // From the end of the prefix this map places: the manager's may have grown since (issue 7).
  const fromMorsel = Math.floor(dataset.cachedBytes / dataset.morselSize);
  map.suffix = await open({ ...planKnobs(process.env), fromMorsel });
  replanners.set(map.suffix, open);
}

/** The replanner remembered for a plan by {@link attachSuffixPlan}, if any. */
export function replannerOf(plan: SuffixPlan): Replanner | undefined {
  return replanners.get(plan);
}

/**
 * Patch width and request size forced through the environment (`FREELOADER_PATCH_WIDTH`,
 * `FREELOADER_PATCH_REQUEST_SIZE` in bytes), for benchmarks that sweep them; else the manager's.
 *
 * @example planKnobs({ FREELOADER_PATCH_WIDTH: '4' }) // → { width: 4 }
 */
export function planKnobs(env: NodeJS.ProcessEnv): SuffixPlanRequest {
  const width = Number(env.FREELOADER_PATCH_WIDTH);
  const requestSize = Number(env.FREELOADER_PATCH_REQUEST_SIZE);
  return {
    ...(Number.isInteger(width) && width > 0 ? { width } : {}),
    ...(Number.isInteger(requestSize) && requestSize > 0 ? { requestSize } : {}),
  };
}
