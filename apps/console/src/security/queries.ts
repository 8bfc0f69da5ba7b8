import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { AuditPage, SourceAllowView } from '@freeloader/protocol';
import { api } from '../api/client';

const SOURCES = ['settings', 'sources'] as const;

/** Entries the audit page loads at a time. */
export const AUDIT_PAGE = 50;

/** The audit log, newest first; `fetchNextPage` loads older entries. */
export const useAudit = () =>
  useInfiniteQuery({
    queryKey: ['audit'] as const,
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) =>
      api<AuditPage>(
        'GET',
        `/audit?limit=${AUDIT_PAGE}${pageParam === null ? '' : `&before=${pageParam}`}`,
      ),
    getNextPageParam: (last) => last.next,
    refetchInterval: 15_000,
  });

/** The source allow list: the admin's entries and the manager's environment's. */
export const useSourceAllow = () =>
  useQuery({ queryKey: SOURCES, queryFn: () => api<SourceAllowView>('GET', '/settings/sources') });

export function useSaveSourceAllow() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (allow: string[]) => api<SourceAllowView>('PUT', '/settings/sources', { allow }),
    onSuccess: (view) => {
      qc.setQueryData(SOURCES, view);
      return qc.invalidateQueries({ queryKey: ['audit'] });
    },
  });
}
