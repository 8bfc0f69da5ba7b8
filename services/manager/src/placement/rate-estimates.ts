import type { AgentDiagnostics, Heartbeat } from '@freeloader/protocol';
import { observedRates, storedProbes } from '../repositories/donor-speeds.js';
import type { PlacementDeps } from './placement-deps.js';

/** Where a donor's predicted rate came from, best first. */
export type RateSource = 'pair' | 'history' | 'probe';

export interface RateEstimate {
  /** Predicted delivery rate to the client, bytes/s. */
  rate: number;
  source: RateSource;
}

/** What the manager knows about a set of donors' speeds, for one reading client. */
export interface DonorSpeeds {
  /** Per donor: the best estimate available (donors with none are absent). */
  rates: Map<string, RateEstimate>;
  /** Per donor: the join-time probe (heartbeat first, else the agents row). */
  diagnostics: Map<string, AgentDiagnostics>;
}

/** Throttle states meaning "the owner is using the machine": placement and reads avoid them. */
export const ACTIVE_THROTTLE_STATES: ReadonlySet<string> = new Set([
  'active',
  'contended',
  'paused',
]);

/** Is this donor's owner busy (or its serving paused) right now, by its last heartbeat? */
export function ownerActive(hb: Heartbeat | undefined): boolean {
  return hb?.throttle !== undefined && ACTIVE_THROTTLE_STATES.has(hb.throttle);
}

/**
 * Predicted delivery rate of each donor to `client` (seed 000 §4.1.2: "decided based on a
 * previous history of benefactor-to-client morsel transfers"): the decaying average this client
 * observed from the donor when there is one, else the average over all clients, else the upload
 * rate the donor's join-time probe measured. A donor throttled right now (a `rateCap` in its
 * heartbeat) is predicted no faster than its cap.
 *
 * @example const { rates } = await donorSpeeds(app, ['<agent id>'], userId); rates.get(id)?.rate
 */
export async function donorSpeeds(
  deps: PlacementDeps,
  agentIds: readonly string[],
  client: string,
): Promise<DonorSpeeds> {
  const ids = [...new Set(agentIds)];
  const rates = new Map<string, RateEstimate>();
  const diagnostics = new Map<string, AgentDiagnostics>();
  if (ids.length === 0) return { rates, diagnostics };
  const [history, probes] = await Promise.all([
    observedRates(deps.pg, ids, client),
    storedProbes(deps.pg, ids),
  ]);
  for (const p of probes) {
    diagnostics.set(p.id, {
      diskReadRate: p.disk_read_rate,
      ...(p.disk_read_cached !== null ? { diskCached: p.disk_read_cached } : {}),
      downloadRate: p.download_rate,
      uploadRate: p.upload_rate,
      measuredAt: p.diagnosed_at!.toISOString(),
    });
  }
  for (const id of ids) {
    const fresh = deps.softState.heartbeatOf(id)?.diagnostics;
    if (fresh) diagnostics.set(id, fresh);
    const upload = diagnostics.get(id)?.uploadRate;
    if (upload) rates.set(id, { rate: upload, source: 'probe' });
  }
  // Aggregate rows first, so a pair row for the same donor overrides them.
  const rows = history;
  for (const r of [
    ...rows.filter((x) => x.client === ''),
    ...rows.filter((x) => x.client !== ''),
  ]) {
    rates.set(r.agent_id, { rate: r.rate, source: r.client === '' ? 'history' : 'pair' });
  }
  for (const [id, est] of rates) {
    const cap = deps.softState.heartbeatOf(id)?.rateCap;
    if (cap && cap > 0 && cap < est.rate) rates.set(id, { ...est, rate: cap });
  }
  return { rates, diagnostics };
}

/** Donors whose rate comes from observed reads (not just a probe). */
export function withHistory(speeds: DonorSpeeds, ids: readonly string[]): string[] {
  return ids.filter((id) => {
    const s = speeds.rates.get(id)?.source;
    return s === 'pair' || s === 'history';
  });
}

/** The median of the known estimates among `ids` (the guess for donors nobody has measured). */
export function medianRate(speeds: DonorSpeeds, ids: readonly string[]): number | null {
  const known = ids
    .map((id) => speeds.rates.get(id)?.rate)
    .filter((r): r is number => r !== undefined)
    .sort((a, b) => a - b);
  if (known.length === 0) return null;
  const mid = Math.floor(known.length / 2);
  return known.length % 2 ? known[mid]! : (known[mid - 1]! + known[mid]!) / 2;
}
