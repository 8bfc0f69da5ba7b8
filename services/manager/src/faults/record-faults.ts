import type pg from 'pg';
import { FreeLoaderError, type FaultReportResult } from '@freeloader/protocol';
import type { EventBus } from '../events.js';
import { recordFaults, type FaultRow } from '../repositories/morsel-faults.js';
import { getPlacement } from '../repositories/placement.js';
import { copiesHeldBy } from './copies-held.js';

/** What recording faults touches; the app satisfies it. */
export interface FaultDeps {
  pg: pg.Pool;
  events: Pick<EventBus, 'publish'>;
}

/** A reported bad copy, before it is matched against placement. */
export type FaultReport = Omit<FaultRow, 'copy'>;

/**
 * Record reported bad copies: each must name a morsel placement puts on that donor (else it is
 * ignored, or with `strict` the whole report is refused with FORBIDDEN — nobody marks copies bad
 * that the donor was never given), becomes one `morsel_faults`
 * row per copy the donor holds, and is announced on the bus (one `fault` event per dataset, donor,
 * reason and reporter) so the console and repair can react. The map then marks the copies
 * unusable.
 *
 * @example
 *   await recordFaultReports(app, [{ datasetId, morsel: 7, agentId, reason: 'corrupt', reportedBy: 'scrub' }])
 *   // → { recorded: 1, ignored: 0 }
 */
export async function recordFaultReports(
  deps: FaultDeps,
  reports: readonly FaultReport[],
  opts: { strict?: boolean } = {},
): Promise<FaultReportResult> {
  const byDataset = groupBy(reports, (r) => r.datasetId);
  const rows: FaultRow[] = [];
  let ignored = 0;
  for (const [datasetId, list] of byDataset) {
    const extents = await getPlacement(deps.pg, datasetId);
    for (const r of list) {
      const copies = copiesHeldBy(extents, r.agentId, r.morsel);
      if (copies.length === 0) {
        // A client names a donor it read from: one that was never given the morsel is a bogus
        // report, refused whole (nothing recorded).
        if (opts.strict) {
          throw new FreeLoaderError(
            'FORBIDDEN',
            `donor ${r.agentId} holds no copy of morsel ${r.morsel} of dataset ${datasetId}`,
          );
        }
        ignored++;
      }
      for (const copy of copies) rows.push({ ...r, copy });
    }
  }
  // A dataset deleted meanwhile takes its rows with it (foreign key): nothing to record then.
  const recorded = await recordFaults(deps.pg, rows).catch((e: unknown) => {
    if ((e as { code?: string }).code === '23503') return 0;
    throw e;
  });
  const groups = groupBy(rows, (r) => `${r.datasetId} ${r.agentId} ${r.reason} ${r.reportedBy}`);
  for (const group of groups.values()) {
    const { datasetId, agentId, reason, reportedBy } = group[0]!;
    deps.events.publish({
      type: 'fault',
      datasetId,
      agentId,
      morsels: group.length,
      reason,
      reportedBy,
    });
  }
  return { recorded, ignored };
}

/** Items by key, in first-seen order (Node 20 has no Map.groupBy). */
function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
