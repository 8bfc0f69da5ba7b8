import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { FailedAttempt, ImportControlResult } from '@freeloader/protocol';
import { api } from '../api/client';
import { keys } from '../api/queries';

/** Failed jobs (time, donor, error), newest first; of one dataset when `datasetId` is given. */
export const useFailedAttempts = (datasetId?: string) =>
  useQuery({
    queryKey: ['failures', datasetId ?? null],
    queryFn: () =>
      api<FailedAttempt[]>(
        'GET',
        `/transfers/failures?limit=50${datasetId ? `&datasetId=${datasetId}` : ''}`,
      ),
    refetchInterval: 10_000,
  });

function useControl(verb: 'cancel' | 'retry') {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (datasetId: string) =>
      api<ImportControlResult>('POST', `/datasets/${datasetId}/${verb}`),
    onSettled: (_res, _err, datasetId) => {
      void qc.invalidateQueries({ queryKey: keys.transfers });
      void qc.invalidateQueries({ queryKey: keys.dataset(datasetId) });
      void qc.invalidateQueries({ queryKey: ['failures'] });
      void qc.invalidateQueries({ queryKey: ['listing'] });
      void qc.invalidateQueries({ queryKey: ['search'] });
    },
  });
}

/** Cancel an import in flight (its starter or an admin). */
export const useCancelImport = () => useControl('cancel');
/** Import a failed dataset again under the same path (its starter or an admin). */
export const useRetryImport = () => useControl('retry');
