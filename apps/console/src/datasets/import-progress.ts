import type { TransferView } from '@freeloader/protocol';
import { groupTransfers } from '../transfers/group';

/** Bytes an import has fetched so far, and of how many. */
export interface ImportProgress {
  doneBytes: number;
  totalBytes: number;
}

/**
 * Each dataset's import progress from its import jobs (summed over donors), for lists that
 * would otherwise show an importing dataset as "none" cached.
 *
 * @example importProgress(transfers).get(datasetId) // { doneBytes: 12582912, totalBytes: 25165824 }
 */
export function importProgress(transfers: readonly TransferView[]): Map<string, ImportProgress> {
  const out = new Map<string, ImportProgress>();
  for (const g of groupTransfers(transfers)) {
    if (g.kind !== 'import' || !g.datasetId || out.has(g.datasetId)) continue;
    out.set(g.datasetId, { doneBytes: g.doneBytes, totalBytes: g.totalBytes });
  }
  return out;
}
