import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { AccessView, GroupView, ShareView } from '@freeloader/protocol';
import { api } from '../api/client';
import { keys } from '../api/queries';

/** Every group (to share with). */
export const useGroups = () =>
  useQuery({ queryKey: ['groups'], queryFn: () => api<GroupView[]>('GET', '/groups') });

/**
 * Who a share reaches, in words: the group's name or "Everyone (site)", and where it comes from
 * when inherited.
 *
 * @example shareLabel({ groupId: 'g', group: 'lab', manage: true, from: 'a' }, 'a/x') // 'lab · may manage · from a/'
 */
export function shareLabel(s: ShareView, path: string): string {
  const parts = [s.group ?? 'Everyone (site)'];
  if (s.manage) parts.push('may manage');
  if (s.from !== path) parts.push(`from ${s.from || ''}/`);
  return parts.join(' · ');
}

/** Share with a group or the site, or stop sharing; the dataset's view is refreshed after. */
export function useShare(datasetId: string) {
  const qc = useQueryClient();
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: keys.dataset(datasetId) });
    void qc.invalidateQueries({ queryKey: ['listing'] });
  };
  const share = useMutation({
    mutationFn: (b: { path: string; group?: string; manage?: boolean }) =>
      api<AccessView>('PUT', '/shares', b),
    onSuccess: refresh,
  });
  const unshare = useMutation({
    mutationFn: (q: { path: string; group?: string }) =>
      api<AccessView>('DELETE', `/shares?${new URLSearchParams(q).toString()}`),
    onSuccess: refresh,
  });
  return { share, unshare };
}
