import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { AGENTS_PAGE_SIZE } from '@freeloader/protocol';
import type {
  AgentListQuery,
  AgentPage,
  DatasetPlacement,
  DatasetView,
  ImportRequest,
  ImportResponse,
  JoinTokenCreate,
  JoinTokenCreated,
  JoinTokenView,
  Listing,
  LoginResponse,
  ThroughputHistory,
  TransferView,
  UserView,
} from '@freeloader/protocol';
import { api, ApiError } from './client';

/** Query keys, one place, so events and mutations invalidate the right caches. */
export const keys = {
  me: ['me'] as const,
  listing: (path: string) => ['listing', path] as const,
  search: (query: string) => ['search', query] as const,
  dataset: (id: string) => ['dataset', id] as const,
  placement: (id: string) => ['placement', id] as const,
  throughput: (id: string) => ['throughput', id] as const,
  transfers: ['transfers'] as const,
  agents: ['agents'] as const,
  tokens: ['tokens'] as const,
};

/** The signed-in user, or null when nobody is. */
export function useMe() {
  return useQuery({
    queryKey: keys.me,
    queryFn: async () => {
      try {
        return await api<UserView>('GET', '/auth/me');
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) return null;
        throw e;
      }
    },
    staleTime: 60_000,
  });
}

export function useLogin() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: { username: string; password: string }) =>
      api<LoginResponse>('POST', '/auth/login', body),
    onSuccess: (res) => {
      qc.clear();
      qc.setQueryData(keys.me, res.user);
    },
  });
}

export function useLogout() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => api('POST', '/auth/logout'),
    onSettled: () => {
      qc.clear();
      qc.setQueryData(keys.me, null);
    },
  });
}

export const useListing = (path: string) =>
  useQuery({
    queryKey: keys.listing(path),
    queryFn: () => api<Listing>('GET', `/namespace?path=${encodeURIComponent(path)}`),
  });

export const useSearch = (query: string) =>
  useQuery({
    queryKey: keys.search(query),
    queryFn: () =>
      api<DatasetView[]>('GET', `/datasets?query=${encodeURIComponent(query)}&limit=200`),
    enabled: query.length > 0,
  });

export const useDataset = (id: string) =>
  useQuery({
    queryKey: keys.dataset(id),
    queryFn: () => api<DatasetView>('GET', `/datasets/${id}`),
  });

export const usePlacement = (id: string) =>
  useQuery({
    queryKey: keys.placement(id),
    queryFn: () => api<DatasetPlacement>('GET', `/datasets/${id}/placement`),
  });

export const useThroughput = (id: string, live: boolean) =>
  useQuery({
    queryKey: keys.throughput(id),
    queryFn: () => api<ThroughputHistory>('GET', `/datasets/${id}/throughput`),
    refetchInterval: live ? 2_000 : false,
  });

/** Transfers; the event stream patches this cache live, the poll is a safety net. */
export const useTransfers = () =>
  useQuery({
    queryKey: keys.transfers,
    queryFn: () => api<TransferView[]>('GET', '/transfers?limit=200'),
    refetchInterval: 10_000,
  });

/**
 * One page of donors (admin only; `enabled` false for scientists, who get 403 here): a search,
 * a state and a cursor, AGENTS_PAGE_SIZE at a time unless `limit` says. Polled every 10 s and
 * on agent events — a page, never the whole list (4.7 MB with 10,000 donors).
 */
export const useAgentPage = (query: AgentListQuery, enabled = true) =>
  useQuery({
    queryKey: [...keys.agents, 'page', query],
    queryFn: () => api<AgentPage>('GET', `/agents?${agentListParams(query)}`),
    refetchInterval: 10_000,
    placeholderData: keepPreviousData,
    enabled,
  });

/**
 * The query string of a donor page.
 *
 * @example agentListParams({ q: 'lab', state: 'live' }) // → 'limit=50&q=lab&state=live'
 */
export function agentListParams(query: AgentListQuery): string {
  const params = new URLSearchParams({ limit: String(query.limit ?? AGENTS_PAGE_SIZE) });
  if (query.q) params.set('q', query.q);
  if (query.state) params.set('state', query.state);
  if (query.cursor) params.set('cursor', query.cursor);
  return params.toString();
}

export const useTokens = () =>
  useQuery({ queryKey: keys.tokens, queryFn: () => api<JoinTokenView[]>('GET', '/tokens') });

export function useCreateToken() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: JoinTokenCreate) => api<JoinTokenCreated>('POST', '/tokens', body),
    onSuccess: () => qc.invalidateQueries({ queryKey: keys.tokens }),
  });
}

export function useRevokeToken() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api('DELETE', `/tokens/${id}`),
    onSuccess: () => qc.invalidateQueries({ queryKey: keys.tokens }),
  });
}

export function useRevokeAgent() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api('DELETE', `/agents/${id}`),
    onSuccess: () => qc.invalidateQueries({ queryKey: keys.agents }),
  });
}

/** Probe (dryRun) or start an import. */
export function useImport() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: ImportRequest) => api<ImportResponse>('POST', '/datasets', body),
    onSuccess: (res) => {
      if (!res.dataset) return;
      void qc.invalidateQueries({ queryKey: ['listing'] });
      void qc.invalidateQueries({ queryKey: ['search'] });
      void qc.invalidateQueries({ queryKey: keys.transfers });
    },
  });
}
