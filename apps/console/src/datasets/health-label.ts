import type { DatasetView } from '@freeloader/protocol';

/** How a dataset's copies stand: all wanted copies live, some at risk, or some only at the source. */
export type HealthTone = 'healthy' | 'at-risk' | 'source-only' | 'unknown';

/**
 * The tone of a dataset's health, from the manager's count (the view's `health`).
 *
 * @example healthTone({ health: { wanted: 2, liveMin: 1, atRisk: 3, sourceOnly: 0, … } }) // 'at-risk'
 */
export function healthTone(d: Pick<DatasetView, 'health'>): HealthTone {
  const h = d.health;
  if (!h || h.morsels === 0) return 'unknown';
  if (h.sourceOnly > 0) return 'source-only';
  return h.atRisk > 0 ? 'at-risk' : 'healthy';
}

/** Mantine colour per tone. */
export const TONE_COLOR: Record<HealthTone, string> = {
  healthy: 'teal',
  'at-risk': 'orange',
  'source-only': 'red',
  unknown: 'gray',
};

/**
 * The list's copies column: live copies of the worst morsel over the copies wanted, "2/2";
 * '—' when nothing is placed.
 *
 * @example copiesLabel({ health: { wanted: 2, liveMin: 1, … } }) // '1/2'
 */
export function copiesLabel(d: Pick<DatasetView, 'health'>): string {
  return d.health && d.health.morsels > 0 ? `${d.health.liveMin}/${d.health.wanted}` : '—';
}

/**
 * The dataset page's health sentence.
 *
 * @example healthText(view)
 *   // '2 copies wanted; live per morsel min 1, avg 1.5; 4 of 8 morsels at risk, 0 only at the source'
 */
export function healthText(
  d: Pick<DatasetView, 'health' | 'replicas' | 'availabilityTarget'>,
): string {
  const h = d.health;
  const target = d.availabilityTarget ? ` (for availability ${d.availabilityTarget})` : '';
  const wanted = h?.wanted ?? d.replicas ?? 1;
  const head = `${wanted} ${wanted === 1 ? 'copy' : 'copies'} wanted${target}`;
  if (!h || h.morsels === 0) return `${head}; nothing placed`;
  return (
    `${head}; live per morsel min ${h.liveMin}, avg ${h.liveAvg}; ` +
    `${h.atRisk} of ${h.morsels} morsels at risk, ${h.sourceOnly} only at the source`
  );
}
