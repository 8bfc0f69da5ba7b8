import { useQuery } from '@tanstack/react-query';
import type { DonorRateView, RepairQueueView } from '@freeloader/protocol';
import { api } from '../api/client';

/**
 * Each donor's decaying average delivery rate as clients observed it (rate history, all clients
 * together), by agent id. Donors nobody has read from yet are absent.
 */
export const useDonorRates = (enabled = true) =>
  useQuery({
    queryKey: ['donor-rates'] as const,
    queryFn: async () =>
      new Map((await api<DonorRateView[]>('GET', '/rates')).map((r) => [r.agentId, r])),
    refetchInterval: 10_000,
    enabled,
  });

/** The repair queue (waiting and running units, bytes, rate, ETA), refreshed every 3 s. */
export const useRepairQueue = (enabled = true) =>
  useQuery({
    queryKey: ['repairs'] as const,
    queryFn: () => api<RepairQueueView>('GET', '/repairs'),
    refetchInterval: 3_000,
    enabled,
  });
