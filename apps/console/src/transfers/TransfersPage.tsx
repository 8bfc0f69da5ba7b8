import { Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useQueries } from '@tanstack/react-query';
import type { DatasetView } from '@freeloader/protocol';
import { api } from '../api/client';
import { historyPoints, useHistory } from '../api/history';
import { usePrincipalNames } from '../api/principals';
import { keys, useTransfers } from '../api/queries';
import { TimeChart } from '../charts/TimeChart';
import { mergeRatePoints } from '../datasets/throughput-points';
import { formatRate } from '../format';
import { ErrorAlert, Loading } from '../ui/feedback';
import { FailedAttempts } from './FailedAttempts';
import { TransferList } from './TransferList';
import { useRateSampler } from './useRateSampler';

/** Paths and states of the datasets in the list (deleted datasets stay unnamed). */
function useDatasets(ids: string[]): {
  names: Record<string, string>;
  states: Record<string, string>;
} {
  const results = useQueries({
    queries: ids.map((id) => ({
      queryKey: keys.dataset(id),
      queryFn: () => api<DatasetView>('GET', `/datasets/${id}`),
      retry: false,
      staleTime: 5_000,
    })),
  });
  const found = results.flatMap((r) => (r.data ? [r.data] : []));
  return {
    names: Object.fromEntries(found.map((d) => [d.id, d.path])),
    states: Object.fromEntries(found.map((d) => [d.id, d.state])),
  };
}

/**
 * Live transfers with progress, rate, ETA, errors, cancel and retry; the cluster's import
 * throughput over real time (sampled by the manager, so it survives reloads and restarts,
 * refined by what this page saw); and the failed attempts.
 */
export function TransfersPage() {
  const transfers = useTransfers();
  const ids = [
    ...new Set((transfers.data ?? []).flatMap((t) => (t.datasetId ? [t.datasetId] : []))),
  ];
  const datasets = useDatasets(ids);
  const nameOf = usePrincipalNames();
  const donorIds = [
    ...new Set((transfers.data ?? []).flatMap((t) => (t.agentId ? [t.agentId] : []))),
  ];
  const donorNames = Object.fromEntries(donorIds.map((id) => [id, nameOf(id)]));
  const persisted = useHistory('import_rate', undefined, 10_000);
  const live = useRateSampler(transfers.data);
  const now = (transfers.data ?? []).reduce((n, t) => n + (t.state === 'running' ? t.rate : 0), 0);
  const points = mergeRatePoints(
    historyPoints(persisted.data),
    live.some((p) => p.value! > 0) ? live : [],
  );
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={2}>Transfers</Title>
        <Text size="sm" c="dimmed" aria-live="polite">
          now {formatRate(now)}
        </Text>
      </Group>
      <Paper withBorder p="md" component="section" aria-label="throughput">
        <TimeChart
          title="throughput"
          format={formatRate}
          minStepMs={(persisted.data?.sampleIntervalS ?? 1) * 1000}
          series={[{ key: 'rate', label: 'all imports', color: 'indigo.6', points }]}
          emptyHint="The manager samples import throughput while transfers run and keeps it across restarts."
        />
      </Paper>
      {transfers.isPending ? (
        <Loading label="Loading transfers…" />
      ) : transfers.isError ? (
        <ErrorAlert error={transfers.error} />
      ) : (
        <TransferList
          transfers={transfers.data}
          datasetNames={datasets.names}
          datasetStates={datasets.states}
          donorNames={donorNames}
        />
      )}
      <Paper withBorder p="md" component="section" aria-label="failed attempts">
        <Title order={4} mb="sm">
          Failed attempts
        </Title>
        <FailedAttempts />
      </Paper>
    </Stack>
  );
}
