import { useQuery } from '@tanstack/react-query';
import type { HistoryResponse, HistorySeries } from '@freeloader/protocol';
import type { TimePoint } from '../charts/time-axis';
import { api } from './client';

/**
 * A series the manager sampled into PostgreSQL (`GET /history`), so charts survive a reload
 * and a manager restart. Refreshed every `everyMs`.
 */
export function useHistory(series: HistorySeries, subject?: string, everyMs = 15_000) {
  return useQuery({
    queryKey: ['history', series, subject ?? null],
    queryFn: () =>
      api<HistoryResponse>(
        'GET',
        `/history?series=${series}${subject ? `&subject=${encodeURIComponent(subject)}` : ''}`,
      ),
    refetchInterval: everyMs,
  });
}

/** A subject's points as chart points (ms since the epoch). */
export function historyPoints(
  res: HistoryResponse | undefined,
  subject: string | null = null,
): TimePoint[] {
  const s = res?.subjects.find((x) => x.subject === subject);
  return (s?.points ?? []).map((p) => ({ at: Date.parse(p.at), value: p.value }));
}
