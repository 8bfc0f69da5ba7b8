import { Group, Stack, Table, Text, Title } from '@mantine/core';
import type { RepairQueueView } from '@freeloader/protocol';
import { formatBytes, formatDuration, formatRate } from '../format';
import { ErrorAlert, Loading } from '../ui/feedback';
import { StateBadge } from '../ui/StateBadge';
import { useRepairQueue } from './queries';

/** Units listed on the page (the counts cover the whole queue). */
const SHOWN = 20;

/** One line: what is left to re-create, how fast, and when a silent donor counts as lost. */
export function RepairSummary({ q }: { q: RepairQueueView }) {
  const morsels = q.waitingMorsels + q.runningMorsels;
  return (
    <Text size="sm" aria-label="repair summary">
      {morsels === 0
        ? 'Every copy is where it should be.'
        : `${morsels} morsels (${formatBytes(q.bytes)}) to re-create: ${q.runningMorsels} moving at ${formatRate(q.rate)}` +
          (q.etaSeconds !== null ? `, done in about ${formatDuration(q.etaSeconds * 1000)}` : '')}
      <Text span c="dimmed">
        {' '}
        · {formatBytes(q.doneBytesLastHour)} repaired in the last hour · a silent donor is lost
        after {formatDuration(q.repairAfterMs)} ({q.repairAfterBasis})
      </Text>
    </Text>
  );
}

/**
 * The repair queue (issue 15): copies being re-created because a donor was lost, left or was
 * revoked, a copy was found bad, or a dataset has fewer copies than wanted; most endangered
 * first (fewest live copies).
 */
export function RepairQueue() {
  const q = useRepairQueue();
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={3}>Repair</Title>
      </Group>
      {q.isPending ? (
        <Loading label="Loading the repair queue…" />
      ) : q.isError ? (
        <ErrorAlert error={q.error} />
      ) : (
        <>
          <RepairSummary q={q.data} />
          {q.data.units.length > 0 && (
            <Table verticalSpacing={4} aria-label="repair queue">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>State</Table.Th>
                  <Table.Th>Why</Table.Th>
                  <Table.Th ta="right">Live copies</Table.Th>
                  <Table.Th ta="right">Morsels</Table.Th>
                  <Table.Th ta="right">Bytes</Table.Th>
                  <Table.Th>Dataset</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {q.data.units.slice(0, SHOWN).map((u) => (
                  <Table.Tr key={u.id}>
                    <Table.Td>
                      <StateBadge state={u.state} />
                    </Table.Td>
                    <Table.Td>{u.reason}</Table.Td>
                    <Table.Td ta="right">{u.liveCopies}</Table.Td>
                    <Table.Td ta="right">{u.morsels}</Table.Td>
                    <Table.Td ta="right">{formatBytes(u.bytes)}</Table.Td>
                    <Table.Td>
                      <Text size="xs" ff="monospace">
                        {u.datasetId.slice(0, 8)} · copy {u.copy}
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </>
      )}
    </Stack>
  );
}
