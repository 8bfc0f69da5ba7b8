import type { Queryable } from '../db/pool.js';

/** A copy recorded bad on its donor (`morsel_faults`, written by scrub and clients). */
export interface CopyFaultRow {
  copy: number;
  morsel: number;
}

/** The recorded faults of each of `datasetIds` (datasets without any are absent). */
export async function faultsOfDatasets(
  db: Queryable,
  datasetIds: readonly string[],
): Promise<Map<string, CopyFaultRow[]>> {
  const out = new Map<string, CopyFaultRow[]>();
  if (datasetIds.length === 0) return out;
  const { rows } = await db.query<{ dataset_id: string; copy: number; morsel: string }>(
    `SELECT dataset_id, copy, morsel FROM morsel_faults WHERE dataset_id = ANY($1::uuid[])`,
    [datasetIds],
  );
  for (const r of rows) {
    const list = out.get(r.dataset_id) ?? [];
    list.push({ copy: r.copy, morsel: Number(r.morsel) });
    out.set(r.dataset_id, list);
  }
  return out;
}
