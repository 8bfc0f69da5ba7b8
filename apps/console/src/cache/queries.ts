import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type {
  CacheStatus,
  ClientRateView,
  EvictionLogEntry,
  PatchSessionView,
  SourceStatsView,
} from '@freeloader/protocol';
import { api } from '../api/client';

/** Query keys of the prefix cache views (seed 002). */
export const cacheKeys = {
  status: ['cache'] as const,
  sources: ['sources'] as const,
  clients: ['client-rates'] as const,
  sessions: ['patch-sessions'] as const,
  evictions: ['evictions'] as const,
};

const every = (ms: number) => ({ refetchInterval: ms, staleTime: ms / 2 });

export const useCacheStatus = () =>
  useQuery({
    queryKey: cacheKeys.status,
    queryFn: () => api<CacheStatus>('GET', '/cache'),
    ...every(5_000),
  });
export const useSources = () =>
  useQuery({
    queryKey: cacheKeys.sources,
    queryFn: () => api<SourceStatsView[]>('GET', '/sources'),
    ...every(10_000),
  });
export const useClientRates = () =>
  useQuery({
    queryKey: cacheKeys.clients,
    queryFn: () => api<ClientRateView[]>('GET', '/clients/rates'),
    ...every(10_000),
  });
export const usePatchSessions = () =>
  useQuery({
    queryKey: cacheKeys.sessions,
    queryFn: () => api<PatchSessionView[]>('GET', '/patch-sessions'),
    ...every(5_000),
  });

export const useEvictionLog = () =>
  useQuery({
    queryKey: cacheKeys.evictions,
    queryFn: () => api<EvictionLogEntry[]>('GET', '/cache/evictions?limit=100'),
    ...every(10_000),
  });

/** Pin (never evict) or unpin a dataset. */
export function usePin() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { id: string; pinned: boolean }) =>
      api('PUT', `/datasets/${v.id}/pin`, { pinned: v.pinned }),
    onSettled: () => qc.invalidateQueries({ queryKey: cacheKeys.status }),
  });
}
