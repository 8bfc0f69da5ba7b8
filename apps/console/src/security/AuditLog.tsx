import { Badge, Button, Code, Stack, Table, Text, Title } from '@mantine/core';
import type { AuditEntry } from '@freeloader/protocol';
import { EmptyState, ErrorAlert, Loading } from '../ui/feedback';
import { useAudit } from './queries';

/** Details worth a glance (the import's URI, a role, an allow list), compactly. */
function detailsText(details: AuditEntry['details']): string {
  return Object.entries(details)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .join('; ');
}

/** Who did what, when and from where: the manager's audit log, newest first. */
export function AuditLog() {
  const audit = useAudit();
  if (audit.isPending) return <Loading />;
  if (audit.isError) return <ErrorAlert error={audit.error} />;
  const entries = audit.data.pages.flatMap((p) => p.entries);
  return (
    <Stack gap="sm">
      <Title order={3}>Audit log</Title>
      {entries.length === 0 ? (
        <EmptyState title="Nothing recorded yet" />
      ) : (
        <Table striped aria-label="audit log">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>Who</Table.Th>
              <Table.Th>Action</Table.Th>
              <Table.Th>On</Table.Th>
              <Table.Th>From</Table.Th>
              <Table.Th>Details</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {entries.map((e) => (
              <Table.Tr key={e.id}>
                <Table.Td>
                  <Text size="sm">{new Date(e.at).toLocaleString()}</Text>
                </Table.Td>
                <Table.Td>{e.actor}</Table.Td>
                <Table.Td>
                  <Badge color={e.outcome === 'ok' ? 'indigo' : 'red'} variant="light">
                    {e.action}
                    {e.outcome === 'refused' ? ' (refused)' : ''}
                  </Badge>
                </Table.Td>
                <Table.Td>{e.target ?? '—'}</Table.Td>
                <Table.Td>
                  <Code>{e.address}</Code>
                </Table.Td>
                <Table.Td>
                  <Text size="xs" c="dimmed">
                    {detailsText(e.details)}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {audit.hasNextPage && (
        <Button
          variant="default"
          onClick={() => void audit.fetchNextPage()}
          loading={audit.isFetchingNextPage}
        >
          Older entries
        </Button>
      )}
    </Stack>
  );
}
