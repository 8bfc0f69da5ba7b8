import { Anchor, Group, Table, Text, Tooltip, UnstyledButton } from '@mantine/core';
import { Link } from 'react-router';
import type { DatasetView, FolderView } from '@freeloader/protocol';
import { formatBytes, formatSince } from '../format';
import { StateBadge } from '../ui/StateBadge';
import { CachedBar } from './CachedBar';

export interface DatasetTableProps {
  datasets: readonly DatasetView[];
  folders?: readonly FolderView[];
  /** Show full paths (search results) rather than names within the folder. */
  fullPaths?: boolean;
  onOpenFolder?: (path: string) => void;
}

const lastName = (path: string) => path.split('/').at(-1) ?? path;

/** Folders first, then datasets with size, cached fraction, state, source, donors, last access. */
export function DatasetTable({
  datasets,
  folders = [],
  fullPaths = false,
  onOpenFolder,
}: DatasetTableProps) {
  return (
    <Table.ScrollContainer minWidth={760}>
      <Table highlightOnHover verticalSpacing="xs" aria-label="datasets">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th ta="right">Size</Table.Th>
            <Table.Th>Cached</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th>Source</Table.Th>
            <Table.Th ta="right">Donors</Table.Th>
            <Table.Th>Last access</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {folders.map((f) => (
            <Table.Tr key={f.id}>
              <Table.Td colSpan={7}>
                <UnstyledButton
                  onClick={() => onOpenFolder?.(f.path)}
                  aria-label={`open folder ${lastName(f.path)}`}
                >
                  <Group gap={6}>
                    <Text aria-hidden>📁</Text>
                    <Text fw={500}>{lastName(f.path)}/</Text>
                  </Group>
                </UnstyledButton>
              </Table.Td>
            </Table.Tr>
          ))}
          {datasets.map((d) => (
            <Table.Tr key={d.id}>
              <Table.Td maw={280}>
                <Anchor
                  component={Link}
                  to={`/datasets/${d.id}`}
                  fw={500}
                  style={{ wordBreak: 'break-all' }}
                >
                  {fullPaths ? d.path : lastName(d.path)}
                </Anchor>
              </Table.Td>
              <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }}>
                {formatBytes(d.sizeBytes)}
              </Table.Td>
              <Table.Td>
                <CachedBar dataset={d} />
              </Table.Td>
              <Table.Td>
                <StateBadge state={d.state} />
              </Table.Td>
              <Table.Td maw={260}>
                <Tooltip label={d.sourceUri ?? 'no source'} openDelay={400}>
                  <Text size="xs" truncate="end" c="dimmed">
                    {d.sourceUri ?? '—'}
                  </Text>
                </Tooltip>
              </Table.Td>
              <Table.Td ta="right">{d.donorCount ?? '—'}</Table.Td>
              <Table.Td style={{ whiteSpace: 'nowrap' }}>
                <Text size="sm">{formatSince(d.lastAccessAt)}</Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
