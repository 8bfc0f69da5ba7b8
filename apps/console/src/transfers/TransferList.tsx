import { Anchor, Group, Paper, Progress, Stack, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { TransferView } from '@freeloader/protocol';
import { formatBytes, formatEta, formatPercent, formatRate, formatSince } from '../format';
import { EmptyState } from '../ui/feedback';
import { StateBadge } from '../ui/StateBadge';
import { ThrottleBadge, ThrottleSummaryBadge } from '../ui/ThrottleBadge';
import { fractionDone, groupTransfers, type TransferGroup } from './group';
import { ImportControls } from './ImportControls';

export interface TransferListProps {
  transfers: readonly TransferView[];
  /** Dataset paths by id, for titles (ids are shown when unknown). */
  datasetNames?: Record<string, string>;
  /** Donor names by id (unknown ids show as short ids). */
  donorNames?: Record<string, string>;
  /** Dataset states by id: Cancel shows for importing datasets, Retry for failed ones. */
  datasetStates?: Record<string, string>;
}

const shortId = (id: string | null) => (id ? id.slice(0, 8) : '—');
const barColor = (state: string) =>
  state === 'failed' ? 'red' : state === 'done' ? 'teal' : state === 'cancelled' ? 'gray' : 'blue';

function Breakdown({
  jobs,
  donorNames,
}: {
  jobs: TransferView[];
  donorNames: Record<string, string>;
}) {
  return (
    <Table fz="xs" verticalSpacing={2} withRowBorders={false} aria-label="per-donor breakdown">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>donor</Table.Th>
          <Table.Th>state</Table.Th>
          <Table.Th w="35%">progress</Table.Th>
          <Table.Th ta="right">bytes</Table.Th>
          <Table.Th ta="right">rate</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {jobs.map((j) => (
          <Table.Tr key={j.jobId}>
            <Table.Td>{(j.agentId && donorNames[j.agentId]) ?? shortId(j.agentId)}</Table.Td>
            <Table.Td>
              {j.state} <ThrottleBadge d={j} quiet />
            </Table.Td>
            <Table.Td>
              <Progress
                size="sm"
                value={fractionDone(j) * 100}
                color={barColor(j.state)}
                aria-hidden
              />
            </Table.Td>
            <Table.Td ta="right">
              {formatBytes(j.doneBytes)} / {formatBytes(j.totalBytes)}
            </Table.Td>
            <Table.Td ta="right">{j.state === 'running' ? formatRate(j.rate) : '—'}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/**
 * What Cancel/Retry act on: the dataset's own state when known (an import whose jobs were all
 * cancelled by a retry's predecessor is not retryable from here), else the group's.
 */
function importState(g: TransferGroup, datasetStates: Record<string, string>): string {
  const own = g.datasetId ? datasetStates[g.datasetId] : undefined;
  return own ?? (g.state === 'failed' ? 'unknown' : g.state);
}

function TransferCard({
  g,
  title,
  donorNames,
  datasetStates,
}: {
  g: TransferGroup;
  title: string;
  donorNames: Record<string, string>;
  datasetStates: Record<string, string>;
}) {
  const fraction = fractionDone(g);
  const remaining = Math.max(0, g.totalBytes - g.doneBytes);
  return (
    <Paper
      withBorder
      p="sm"
      radius="md"
      component="article"
      aria-label={`${g.kind} ${title}`}
      style={{ overflowX: 'auto' }}
    >
      <Group justify="space-between" wrap="wrap" gap="xs" mb={6}>
        <Group gap="xs" wrap="wrap" miw={0}>
          <Text size="xs" tt="uppercase" c="dimmed" fw={700}>
            {g.kind}
          </Text>
          {g.datasetId ? (
            <Anchor
              component={Link}
              to={`/datasets/${g.datasetId}`}
              fw={600}
              style={{ overflowWrap: 'anywhere' }}
            >
              {title}
            </Anchor>
          ) : (
            <Text fw={600}>{title}</Text>
          )}
          <StateBadge state={g.state} />
          <ThrottleSummaryBadge donors={g.jobs.filter((j) => j.state === 'running')} />
        </Group>
        <Group gap="xs" wrap="nowrap">
          <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
            updated {formatSince(g.updatedAt)}
          </Text>
          {g.kind === 'import' && g.datasetId && (
            <ImportControls
              datasetId={g.datasetId}
              name={title}
              state={importState(g, datasetStates)}
            />
          )}
        </Group>
      </Group>
      <Progress.Root size="lg">
        <Progress.Section
          value={fraction * 100}
          color={barColor(g.state)}
          animated={g.state === 'running'}
          aria-label={`progress of ${title}`}
        />
      </Progress.Root>
      <Group gap="lg" mt={6} fz="sm">
        <Text size="sm" fw={600} data-testid="percent">
          {formatPercent(fraction)}
        </Text>
        <Text size="sm">
          {formatBytes(g.doneBytes)} of {formatBytes(g.totalBytes)}
        </Text>
        {g.state === 'running' && (
          <>
            <Text size="sm">{formatRate(g.rate)}</Text>
            <Text size="sm">ETA {formatEta(remaining, g.rate)}</Text>
          </>
        )}
        <Text size="sm" c="dimmed">
          {g.jobs.length} donor{g.jobs.length === 1 ? '' : 's'}
        </Text>
      </Group>
      {g.errors.map((e) => (
        <Text key={e} size="sm" c="red" mt={4} role="alert">
          {e}
        </Text>
      ))}
      {g.jobs.length > 0 && <Breakdown jobs={g.jobs} donorNames={donorNames} />}
    </Paper>
  );
}

/**
 * Transfers as cards, one per dataset import (or delete), each with a progress bar, MB/s, ETA,
 * errors and a per-donor breakdown. Finished and failed transfers stay listed.
 */
export function TransferList({
  transfers,
  datasetNames = {},
  donorNames = {},
  datasetStates = {},
}: TransferListProps) {
  const groups = groupTransfers(transfers);
  if (groups.length === 0) {
    return (
      <EmptyState title="No transfers yet">
        Imports and deletions show up here live, with their progress per donor.
      </EmptyState>
    );
  }
  return (
    <Stack gap="sm">
      {groups.map((g) => (
        <TransferCard
          key={g.key}
          g={g}
          title={(g.datasetId && datasetNames[g.datasetId]) ?? `dataset ${shortId(g.datasetId)}`}
          donorNames={donorNames}
          datasetStates={datasetStates}
        />
      ))}
    </Stack>
  );
}
