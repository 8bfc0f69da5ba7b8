import {
  donorsOfMorsel,
  formatSize,
  morselCount,
  type DatasetPlacement,
  type DatasetView,
} from '@freeloader/protocol';

/** One donor of a dataset as `stat` shows it. */
export interface DonorShare {
  id: string;
  name: string;
  state: string;
  /** Morsels it holds (every copy counted). */
  morsels: number;
}

/** What `stat` says about a dataset's health, and the numbers behind it. */
export interface DatasetHealth {
  /** One line: "healthy: …", "degraded: …", "importing", "failed: …", "deleting". */
  summary: string;
  donorsLive: number;
  donorsTotal: number;
  /** Cached morsels, and those of them with no copy on a live donor. */
  cachedMorsels: number;
  unreachableMorsels: number;
  donors: DonorShare[];
}

/**
 * A dataset's health from its view and placement: which donors hold it (by name), how many are
 * live, and whether every cached morsel has a copy on a live donor (reads of the others fall
 * back to the source, pinned to the imported version).
 *
 * @example
 *   datasetHealth(view, placement).summary
 *   // 'healthy: all 4 cached morsels on live donors'
 *   // 'degraded: 2 of 4 cached morsels have no live donor (reads fetch them from the source)'
 */
export function datasetHealth(d: DatasetView, p: DatasetPlacement): DatasetHealth {
  const live = new Set(p.donors.filter((x) => x.state === 'live').map((x) => x.id));
  const cachedMorsels = Math.min(
    morselCount(d.cachedBytes, d.morselSize),
    morselCount(d.sizeBytes, d.morselSize),
  );
  const counts = new Map<string, number>();
  let unreachableMorsels = 0;
  for (let m = 0; m < cachedMorsels; m++) {
    const holders = donorsOfMorsel(p.extents, m);
    for (const id of holders) counts.set(id, (counts.get(id) ?? 0) + 1);
    if (!holders.some((id) => live.has(id))) unreachableMorsels++;
  }
  const donors = p.donors
    .map((x) => ({ id: x.id, name: x.name, state: x.state, morsels: counts.get(x.id) ?? 0 }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return {
    summary: summary(d, cachedMorsels, unreachableMorsels),
    donorsLive: donors.filter((x) => live.has(x.id)).length,
    donorsTotal: donors.length,
    cachedMorsels,
    unreachableMorsels,
    donors,
  };
}

function summary(d: DatasetView, cached: number, unreachable: number): string {
  if (d.state === 'importing') return 'importing';
  if (d.state === 'deleting') return 'deleting';
  if (d.state === 'failed') return `failed${d.error ? `: ${d.error}` : ''}`;
  const rest =
    d.cachedBytes < d.sizeBytes
      ? `; the last ${formatSize(d.sizeBytes - d.cachedBytes)} is read from the source`
      : '';
  if (cached === 0) return `not cached: every read goes to the source`;
  if (unreachable === 0) return `healthy: all ${cached} cached morsels on live donors${rest}`;
  return (
    `degraded: ${unreachable} of ${cached} cached morsels have no live donor ` +
    `(reads fetch them from the source)${rest}`
  );
}
