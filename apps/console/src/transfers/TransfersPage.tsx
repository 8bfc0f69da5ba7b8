import { Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useQueries } from '@tanstack/react-query';
import type { DatasetView } from '@freeloader/protocol';
import { api } from '../api/client';
import { keys, useAgents, useMe, useTransfers } from '../api/queries';
import { ThroughputChart } from '../datasets/ThroughputChart';
import { formatRate } from '../format';
import { ErrorAlert, Loading } from '../ui/feedback';
import { TransferList } from './TransferList';
import { useRateSampler } from './useRateSampler';

/** Dataset paths for the ids in the list (deleted datasets stay unnamed). */
function useDatasetNames(ids: string[]): Record<string, string> {
  const results = useQueries({
    queries: ids.map((id) => ({
      queryKey: keys.dataset(id),
      queryFn: () => api<DatasetView>('GET', `/datasets/${id}`),
      retry: false,
      staleTime: 30_000,
    })),
  });
  return Object.fromEntries(results.flatMap((r) => (r.data ? [[r.data.id, r.data.path]] : [])));
}

/** Live transfers with progress, rate, ETA and errors, and this session's throughput chart. */
export function TransfersPage() {
  const me = useMe().data;
  const transfers = useTransfers();
  const agents = useAgents(me?.role === 'admin');
  const ids = [
    ...new Set((transfers.data ?? []).flatMap((t) => (t.datasetId ? [t.datasetId] : []))),
  ];
  const datasetNames = useDatasetNames(ids);
  const donorNames = Object.fromEntries((agents.data ?? []).map((a) => [a.id, a.name]));
  const points = useRateSampler(transfers.data);
  const now = (transfers.data ?? []).reduce((n, t) => n + (t.state === 'running' ? t.rate : 0), 0);
  const active = points.some((p) => p.rate > 0);
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={2}>Transfers</Title>
        <Text size="sm" c="dimmed" aria-live="polite">
          now {formatRate(now)}
        </Text>
      </Group>
      <Paper withBorder p="md" component="section" aria-label="throughput">
        <ThroughputChart
          points={active ? points : []}
          emptyHint="The chart fills in while transfers run (sampled every second while this page is open)."
        />
      </Paper>
      {transfers.isPending ? (
        <Loading label="Loading transfers…" />
      ) : transfers.isError ? (
        <ErrorAlert error={transfers.error} />
      ) : (
        <TransferList
          transfers={transfers.data}
          datasetNames={datasetNames}
          donorNames={donorNames}
        />
      )}
    </Stack>
  );
}
