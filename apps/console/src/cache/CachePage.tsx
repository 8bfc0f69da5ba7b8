import { Paper, Progress, SimpleGrid, Stack, Switch, Table, Text, Title } from '@mantine/core';
import type { CacheStatus } from '@freeloader/protocol';
import { formatBytes, formatPercent, formatRate } from '../format';
import { usePrincipalNames } from '../api/principals';
import { EmptyState, ErrorAlert, Loading } from '../ui/feedback';
import { Hint } from '../ui/Hint';
import { TERMS } from '../ui/terms';
import { EvictionLog } from './EvictionLog';
import { useCacheStatus, useClientRates, usePatchSessions, usePin, useSources } from './queries';

const rate = (r: number | null) => (r === null ? '–' : formatRate(r));

/** Space used, watermarks, eviction counts, and prefixes extended for popular datasets. */
export function CacheSpace({ s }: { s: CacheStatus }) {
  const used = s.capacityBytes > 0 ? s.usedBytes / s.capacityBytes : 0;
  const e = s.evictions;
  return (
    <Stack gap={4}>
      <Progress value={used * 100} aria-label="cache space used" />
      <Text size="sm">
        {formatBytes(s.usedBytes)} of {formatBytes(s.capacityBytes)} ({formatPercent(used)}); evicts
        above {formatPercent(s.highWatermark)} down to {formatPercent(s.lowWatermark)}. {e.trims}{' '}
        trims ({formatBytes(e.trimmedBytes)}), {e.evictions} evictions (
        {formatBytes(e.evictedBytes)}), {e.extensions} extensions ({formatBytes(e.extendedBytes)})
      </Text>
    </Stack>
  );
}

/** Each dataset: cached part (and an extension growing it), model prefix, reads, a pin switch. */
export function CachedDatasets({ s }: { s: CacheStatus }) {
  const pin = usePin();
  if (s.datasets.length === 0) return <EmptyState title="No datasets cached" />;
  return (
    <Table.ScrollContainer minWidth={520}>
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Dataset</Table.Th>
            <Table.Th>Cached</Table.Th>
            <Table.Th>Model prefix</Table.Th>
            <Table.Th>Reads</Table.Th>
            <Table.Th>Pinned</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {s.datasets.map((d) => (
            <Table.Tr key={d.id}>
              <Table.Td style={{ overflowWrap: 'anywhere' }}>{d.path}</Table.Td>
              <Table.Td>
                {formatBytes(d.cachedBytes)} of {formatBytes(d.sizeBytes)}
                {d.extendingToBytes !== undefined && (
                  <Text span size="xs" c="dimmed">
                    {' '}
                    (extending to {formatBytes(d.extendingToBytes)})
                  </Text>
                )}
              </Table.Td>
              <Table.Td>{formatBytes(d.prefixBytes)}</Table.Td>
              <Table.Td>{d.reads ?? '–'}</Table.Td>
              <Table.Td>
                <Switch
                  checked={d.pinned}
                  aria-label={`pin ${d.path}`}
                  onChange={(ev) => pin.mutate({ id: d.id, pinned: ev.currentTarget.checked })}
                />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** The prefix cache (seed 002): space and evictions, sources, client rates, patch sessions. */
export function CachePage() {
  const status = useCacheStatus();
  const sources = useSources();
  const clients = useClientRates();
  const sessions = usePatchSessions();
  const nameOf = usePrincipalNames();
  return (
    <Stack gap="md">
      <Title order={2}>Cache</Title>
      <Paper withBorder p="md">
        {status.isPending ? (
          <Loading />
        ) : status.isError ? (
          <ErrorAlert error={status.error} />
        ) : (
          <Stack>
            <CacheSpace s={status.data} />
            <CachedDatasets s={status.data} />
          </Stack>
        )}
      </Paper>
      <Paper withBorder p="md">
        <Title order={4}>Sources</Title>
        {sources.isError ? (
          <ErrorAlert error={sources.error} />
        ) : (sources.data ?? []).length === 0 ? (
          <EmptyState title="No source measured yet" />
        ) : (
          <Table.ScrollContainer minWidth={560}>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Source</Table.Th>
                  <Table.Th>
                    <Hint label="Startup latency" hint={TERMS.startupLatency} />
                  </Table.Th>
                  <Table.Th>
                    <Hint label="Patch rate" hint={TERMS.patchRate} />
                  </Table.Th>
                  <Table.Th>Import rate</Table.Th>
                  <Table.Th>Request size</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {sources.data?.map((s) => (
                  <Table.Tr key={s.source}>
                    <Table.Td>{s.source}</Table.Td>
                    <Table.Td>
                      {s.startupLatencyS === null ? '–' : `${s.startupLatencyS.toFixed(2)} s`}
                    </Table.Td>
                    <Table.Td>
                      {rate(s.patchRate)}
                      {s.patchWidth ? ` (${s.patchWidth} nodes)` : ''}
                    </Table.Td>
                    <Table.Td>{rate(s.importRate)}</Table.Td>
                    <Table.Td>{formatBytes(s.requestSize)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Paper>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Paper withBorder p="md" component="section" aria-label="client read rates">
          <Title order={4}>
            <Hint label="Client read rates" hint={TERMS.clientRate} />
          </Title>
          {clients.isError ? (
            <ErrorAlert error={clients.error} />
          ) : (clients.data ?? []).length === 0 ? (
            <EmptyState title="No reads measured yet">
              Each client’s read rate is learned from its reads out of the cache.
            </EmptyState>
          ) : (
            clients.data?.map((c) => (
              <Text size="sm" key={c.client} data-testid="client-rate">
                {nameOf(c.client)}: {formatRate(c.rate)} ({c.samples} reads)
              </Text>
            ))
          )}
        </Paper>
        <Paper withBorder p="md" component="section" aria-label="patch sessions">
          <Title order={4}>Patch sessions</Title>
          {sessions.isError ? (
            <ErrorAlert error={sessions.error} />
          ) : (sessions.data ?? []).length === 0 ? (
            <EmptyState title="No patch sessions yet">
              When someone reads past a dataset’s cached prefix, the donors fetch the rest from the
              source together; each such collective download is listed here.
            </EmptyState>
          ) : (
            sessions.data?.slice(0, 10).map((s) => (
              <Text size="sm" key={s.id} style={{ overflowWrap: 'anywhere' }}>
                {nameOf(s.client)} ({s.state}): morsels {s.firstMorsel}–{s.endMorsel} over{' '}
                {s.nodes.length} nodes, {formatBytes(s.bytes)} at {rate(s.rate)}
              </Text>
            ))
          )}
        </Paper>
      </SimpleGrid>
      <Paper withBorder p="md" component="section" aria-label="eviction log">
        <Title order={4} mb="sm">
          Eviction log
        </Title>
        <EvictionLog />
      </Paper>
    </Stack>
  );
}
