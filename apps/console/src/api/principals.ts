import { useQuery } from '@tanstack/react-query';
import type { PrincipalView } from '@freeloader/protocol';
import { api } from './client';

/** An id shown when no name is known: its first 8 characters, or a dash. */
export const shortId = (id: string | null | undefined) => (id ? id.slice(0, 8) : '—');

/**
 * Names of users and agents by id (`GET /principals`), for anywhere the wire carries a UUID.
 * Returns a lookup that falls back to a short id while loading or for unknown ids; '' (the
 * all-clients aggregate) reads "all clients".
 *
 * @example const nameOf = usePrincipalNames(); nameOf(session.client) // 'alice'
 */
export function usePrincipalNames(): (id: string | null | undefined) => string {
  const { data } = useQuery({
    queryKey: ['principals'],
    queryFn: () => api<PrincipalView[]>('GET', '/principals'),
    staleTime: 30_000,
    refetchInterval: 60_000,
  });
  const names = new Map((data ?? []).map((p) => [p.id, p.name]));
  return (id) => (id === '' ? 'all clients' : ((id && names.get(id)) ?? shortId(id)));
}
