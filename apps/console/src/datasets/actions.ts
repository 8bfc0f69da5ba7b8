import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { DatasetDeleted, DatasetView, ImportResponse } from '@freeloader/protocol';
import { api, ApiError } from '../api/client';
import { keys } from '../api/queries';

function invalidateDatasets(qc: ReturnType<typeof useQueryClient>, id: string) {
  void qc.invalidateQueries({ queryKey: ['listing'] });
  void qc.invalidateQueries({ queryKey: ['search'] });
  void qc.invalidateQueries({ queryKey: keys.dataset(id) });
  void qc.invalidateQueries({ queryKey: keys.transfers });
}

/** Delete (evict) a dataset: donors drop its morsels, then it is gone. */
export function useDeleteDataset() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<DatasetDeleted>('DELETE', `/datasets/${id}`),
    onSuccess: (_res, id) => invalidateDatasets(qc, id),
  });
}

/** Poll until the dataset no longer exists (its donors have dropped it) or `timeoutMs` passes. */
async function waitUntilGone(id: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await api<DatasetView>('GET', `/datasets/${id}`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return;
      throw e;
    }
    if (Date.now() > deadline) {
      throw new ApiError(504, 'TIMEOUT', 'the old copy is still being deleted; try again shortly');
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Re-import: delete the dataset, wait until its donors have dropped it, then import the same
 * URI under the same path (with the manager's default striping).
 */
export function useReimport() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (d: DatasetView): Promise<ImportResponse> => {
      if (!d.sourceUri) throw new ApiError(400, 'BAD_REQUEST', 'this dataset has no source URI');
      await api<DatasetDeleted>('DELETE', `/datasets/${d.id}`);
      await waitUntilGone(d.id, 60_000);
      return api<ImportResponse>('POST', '/datasets', { uri: d.sourceUri, name: d.path });
    },
    onSettled: (_res, _err, d) => invalidateDatasets(qc, d.id),
  });
}
