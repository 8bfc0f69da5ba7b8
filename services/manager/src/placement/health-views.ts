import type { DatasetView } from '@freeloader/protocol';
import { faultsOfDatasets } from '../repositories/copy-faults.js';
import { getPlacements } from '../repositories/placement.js';
import { datasetHealth } from './dataset-health.js';
import type { PlacementDeps } from './placement-deps.js';

/**
 * Fill `health` into dataset views (two queries for all of them): live copies against the
 * wanted n, with liveness from soft state and copies listed in `morsel_faults` not counted.
 * Datasets being deleted get none.
 *
 * @example const [view] = await withHealth(app, [await app.namespaceRepo.get(id)]);
 */
export async function withHealth<T extends DatasetView>(
  deps: PlacementDeps,
  views: T[],
): Promise<T[]> {
  const ids = views.filter((v) => v.state !== 'deleting').map((v) => v.id);
  const [placements, faults] = await Promise.all([
    getPlacements(deps.pg, ids),
    faultsOfDatasets(deps.pg, ids),
  ]);
  const live = (donor: string): boolean => deps.softState.stateOf(donor) === 'live';
  for (const view of views) {
    const extents = placements.get(view.id);
    if (!extents) continue;
    view.health = datasetHealth({
      extents,
      wanted: view.replicas ?? 1,
      live,
      faults: faults.get(view.id) ?? [],
    });
  }
  return views;
}
