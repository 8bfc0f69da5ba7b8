import { useState } from 'react';
import { Button, Group, Modal, Progress, Stack, Table, Text } from '@mantine/core';
import type { AgentView } from '@freeloader/protocol';
import { useRevokeAgent } from '../api/queries';
import { formatAgo, formatBytes, formatRate } from '../format';
import { EmptyState, ErrorAlert } from '../ui/feedback';
import { Hint } from '../ui/Hint';
import { StateBadge } from '../ui/StateBadge';
import { ThrottleBadge } from '../ui/ThrottleBadge';
import { TERMS } from '../ui/terms';
import { MeasuredRates, ObservedRate } from './MeasuredRates';
import { useDonorRates } from './queries';

function Usage({ a }: { a: AgentView }) {
  if (a.bandwidthOnly)
    return (
      <Text size="xs" c="dimmed">
        bandwidth only
      </Text>
    );
  const used = a.quotaBytes > 0 ? (a.usedBytes / a.quotaBytes) * 100 : 0;
  const reserved = a.quotaBytes > 0 ? (a.reservedBytes / a.quotaBytes) * 100 : 0;
  return (
    <Stack gap={2} miw={140}>
      <Progress.Root size="sm" aria-label={`${a.name} space used`}>
        <Progress.Section value={used} color="indigo" />
        <Progress.Section value={reserved} color="indigo.2" />
      </Progress.Root>
      <Text size="xs">
        {formatBytes(a.usedBytes)} of {formatBytes(a.quotaBytes)}
        {a.reservedBytes > 0 && (
          <Text span c="dimmed">
            {' '}
            (+{formatBytes(a.reservedBytes)} reserved)
          </Text>
        )}
      </Text>
    </Stack>
  );
}

/**
 * Donors with state, space, serving rate, the rates their join probe measured and clients
 * observed, throttle and last heartbeat; admins may revoke.
 */
export function DonorTable({ agents }: { agents: readonly AgentView[] }) {
  const revoke = useRevokeAgent();
  const observed = useDonorRates(agents.length > 0).data;
  const [target, setTarget] = useState<AgentView | null>(null);
  if (agents.length === 0) {
    return (
      <EmptyState title="No donors yet">
        Create a join token below and run the enrollment command on a workstation with spare disk.
      </EmptyState>
    );
  }
  return (
    <>
      <Table.ScrollContainer minWidth={1040}>
        <Table verticalSpacing="xs" aria-label="donors" highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Space</Table.Th>
              <Table.Th ta="right">Serving</Table.Th>
              <Table.Th>Measured</Table.Th>
              <Table.Th>Observed</Table.Th>
              <Table.Th>
                <Hint label="Throttle" hint={TERMS.throttle} />
              </Table.Th>
              <Table.Th>Last heartbeat</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {[...agents]
              .sort((x, y) => x.name.localeCompare(y.name))
              .map((a) => (
                <Table.Tr key={a.id}>
                  <Table.Td>
                    <Text fw={500} size="sm">
                      {a.name}
                    </Text>
                    <Text size="xs" c="dimmed">
                      {a.url}
                    </Text>
                  </Table.Td>
                  <Table.Td miw={76}>
                    <Stack gap={2} align="flex-start">
                      <StateBadge state={a.state} />
                      {/* Repair's view: offline (not read, not repaired yet), lost, leaving. */}
                      {a.failureClass && a.failureClass !== 'online' && (
                        <StateBadge state={a.failureClass} />
                      )}
                    </Stack>
                  </Table.Td>
                  <Table.Td>
                    <Usage a={a} />
                  </Table.Td>
                  <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }}>
                    {formatRate(a.servingRate)}
                  </Table.Td>
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>
                    <MeasuredRates d={a.diagnostics} />
                  </Table.Td>
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>
                    <ObservedRate r={observed?.get(a.id)} />
                  </Table.Td>
                  <Table.Td>
                    <ThrottleBadge d={a} />
                  </Table.Td>
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>
                    {formatAgo(a.lastHeartbeatAgoMs)}
                  </Table.Td>
                  <Table.Td>
                    {a.state !== 'revoked' && (
                      <Button
                        size="compact-xs"
                        color="red"
                        variant="subtle"
                        onClick={() => setTarget(a)}
                        aria-label={`revoke ${a.name}`}
                      >
                        Revoke
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Modal
        opened={target !== null}
        onClose={() => setTarget(null)}
        title={`Revoke ${target?.name ?? ''}?`}
        centered
      >
        <Stack>
          <Text size="sm">
            Its credential stops working at once; the morsels it holds are no longer read from it.
          </Text>
          <ErrorAlert error={revoke.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setTarget(null)}>
              Cancel
            </Button>
            <Button
              color="red"
              loading={revoke.isPending}
              onClick={() =>
                target && revoke.mutate(target.id, { onSuccess: () => setTarget(null) })
              }
            >
              Revoke
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
