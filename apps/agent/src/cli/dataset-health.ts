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
  /** One line: "healthy: …", "at risk: …", "degraded: …", "importing", "failed: …", "deleting". */
  summary: string;
  /** One line on copies: wanted, live per morsel, at risk, only at the source ('-' unknown). */
  copies: string;
  donorsLive: number;
  donorsTotal: number;
  /** Cached morsels, and those of them with no live copy (the manager's count). */
  cachedMorsels: number;
  unreachableMorsels: number;
  donors: DonorShare[];
}

/**
 * A dataset's health for `stat`: the manager's count of live copies (the view's `health`, the
 * one place it is computed) in words, and which donors hold the dataset (by name), how many of
 * them are live and how many morsels each holds over all copies.
 *
 * @example
 *   datasetHealth(view, placement).summary
 *   // 'healthy: all 4 cached morsels have 2 live copies'
 *   // 'at risk: 4 of 4 cached morsels have fewer than 2 live copies (at least 1 each)'
 *   // 'degraded: 2 of 4 cached morsels have no live copy (reads fetch them from the source)'
 */
export function datasetHealth(d: DatasetView, p: DatasetPlacement): DatasetHealth {
  const live = new Set(p.donors.filter((x) => x.state === 'live').map((x) => x.id));
  const cachedMorsels = Math.min(
    morselCount(d.cachedBytes, d.morselSize),
    morselCount(d.sizeBytes, d.morselSize),
  );
  const counts = new Map<string, number>();
  for (let m = 0; m < cachedMorsels; m++) {
    for (const id of donorsOfMorsel(p.extents, m)) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const donors = p.donors
    .map((x) => ({ id: x.id, name: x.name, state: x.state, morsels: counts.get(x.id) ?? 0 }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return {
    summary: summary(d, cachedMorsels),
    copies: copiesLine(d),
    donorsLive: donors.filter((x) => live.has(x.id)).length,
    donorsTotal: donors.length,
    cachedMorsels,
    unreachableMorsels: d.health?.sourceOnly ?? 0,
    donors,
  };
}

/**
 * The copies column of `ls` and the console list: live copies of the worst morsel over the
 * copies wanted, "2/2"; "-" when the manager did not say.
 *
 * @example copiesColumn({ ...view, health: { wanted: 2, liveMin: 1, … } }) // '1/2'
 */
export function copiesColumn(d: Pick<DatasetView, 'health'>): string {
  return d.health ? `${d.health.liveMin}/${d.health.wanted}` : '-';
}

function copiesLine(d: DatasetView): string {
  const h = d.health;
  if (!h) return d.replicas ? `${d.replicas} wanted` : '-';
  const target = d.availabilityTarget ? ` (for availability ${d.availabilityTarget})` : '';
  return (
    `${h.wanted} wanted${target}; live per morsel min ${h.liveMin}, avg ${h.liveAvg}; ` +
    `${h.atRisk} at risk, ${h.sourceOnly} only at the source`
  );
}

function summary(d: DatasetView, cached: number): string {
  if (d.state === 'importing') return 'importing';
  if (d.state === 'deleting') return 'deleting';
  if (d.state === 'failed') return `failed${d.error ? `: ${d.error}` : ''}`;
  const rest =
    d.cachedBytes < d.sizeBytes
      ? `; the last ${formatSize(d.sizeBytes - d.cachedBytes)} is read from the source`
      : '';
  if (cached === 0) return `not cached: every read goes to the source`;
  const h = d.health;
  if (!h) return `unknown: the manager gave no health${rest}`;
  const of = `${h.morsels === cached ? '' : `${h.morsels} placed of `}${cached} cached morsels`;
  if (h.sourceOnly > 0) {
    return `degraded: ${h.sourceOnly} of ${of} have no live copy (reads fetch them from the source)${rest}`;
  }
  if (h.atRisk > 0) {
    return `at risk: ${h.atRisk} of ${of} have fewer than ${h.wanted} live copies (at least ${h.liveMin} each)${rest}`;
  }
  const copies = `${h.wanted} live ${h.wanted === 1 ? 'copy' : 'copies'}`;
  return `healthy: all ${of} have ${copies}${rest}`;
}
