import { Anchor, Group, Table, Text, Tooltip, UnstyledButton, useMatches } from '@mantine/core';
import { Link } from 'react-router';
import type { DatasetView, FolderView } from '@freeloader/protocol';
import { formatBytes, formatSince } from '../format';
import { FolderIcon } from '../ui/icons';
import { StateBadge } from '../ui/StateBadge';
import { CachedBar } from './CachedBar';
import { copiesLabel, healthText, healthTone, TONE_COLOR } from './health-label';
import type { ImportProgress } from './import-progress';

export interface DatasetTableProps {
  datasets: readonly DatasetView[];
  folders?: readonly FolderView[];
  /** Show full paths (search results) rather than names within the folder. */
  fullPaths?: boolean;
  onOpenFolder?: (path: string) => void;
  /** Import progress of importing datasets, by id. */
  progress?: ReadonlyMap<string, ImportProgress>;
}

const lastName = (path: string) => path.split('/').at(-1) ?? path;

/**
 * Folders first, then datasets with size, cached fraction (or import progress), state, live
 * copies of the worst morsel over the copies wanted, source, donors, last access. On a phone only name, size, cached and state are shown, so nothing is
 * cut or needs sideways scrolling.
 */
export function DatasetTable({
  datasets,
  folders = [],
  fullPaths = false,
  onOpenFolder,
  progress,
}: DatasetTableProps) {
  const minWidth = useMatches({ base: 0, sm: 760 });
  return (
    <Table.ScrollContainer minWidth={minWidth}>
      <Table highlightOnHover verticalSpacing="xs" aria-label="datasets">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th ta="right">Size</Table.Th>
            <Table.Th>Cached</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th visibleFrom="sm">Copies</Table.Th>
            <Table.Th visibleFrom="sm">Source</Table.Th>
            <Table.Th visibleFrom="sm" ta="right">
              Donors
            </Table.Th>
            <Table.Th visibleFrom="sm">Last access</Table.Th>
            <Table.Th visibleFrom="sm">Owner</Table.Th>
            <Table.Th visibleFrom="sm">Shared with</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {folders.map((f) => (
            <Table.Tr key={f.id}>
              <Table.Td colSpan={10}>
                <UnstyledButton
                  onClick={() => onOpenFolder?.(f.path)}
                  aria-label={`open folder ${lastName(f.path)}`}
                >
                  <Group gap={6} wrap="nowrap">
                    <FolderIcon size={18} />
                    <Text fw={500} style={{ overflowWrap: 'anywhere' }}>
                      {lastName(f.path)}/
                    </Text>
                  </Group>
                </UnstyledButton>
              </Table.Td>
            </Table.Tr>
          ))}
          {datasets.map((d) => (
            <Table.Tr key={d.id}>
              <Table.Td maw={280} data-testid="dataset-name">
                <Anchor
                  component={Link}
                  to={`/datasets/${d.id}`}
                  fw={500}
                  style={{ overflowWrap: 'anywhere' }}
                >
                  {fullPaths ? d.path : lastName(d.path)}
                </Anchor>
              </Table.Td>
              <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }}>
                {formatBytes(d.sizeBytes)}
              </Table.Td>
              <Table.Td>
                <CachedBar dataset={d} progress={progress?.get(d.id)} />
              </Table.Td>
              <Table.Td>
                <StateBadge state={d.state} />
              </Table.Td>
              <Table.Td visibleFrom="sm" data-testid="dataset-copies">
                <Tooltip label={healthText(d)} openDelay={300}>
                  <Text size="sm" c={TONE_COLOR[healthTone(d)]} fw={500}>
                    {copiesLabel(d)}
                  </Text>
                </Tooltip>
              </Table.Td>
              <Table.Td maw={260} visibleFrom="sm">
                <Tooltip label={d.sourceUri ?? 'no source'} openDelay={400}>
                  <Text size="xs" truncate="end" c="dimmed">
                    {d.sourceUri ?? '—'}
                  </Text>
                </Tooltip>
              </Table.Td>
              <Table.Td ta="right" visibleFrom="sm">
                {d.donorCount ?? '—'}
              </Table.Td>
              <Table.Td style={{ whiteSpace: 'nowrap' }} visibleFrom="sm">
                <Text size="sm">{formatSince(d.lastAccessAt)}</Text>
              </Table.Td>
              <Table.Td visibleFrom="sm" data-testid="dataset-owner">
                <Text size="sm">{d.owner ?? '—'}</Text>
              </Table.Td>
              <Table.Td visibleFrom="sm" maw={200} data-testid="dataset-sharing">
                <Text size="xs" c="dimmed" truncate="end">
                  {sharedWith(d)}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** Whom a dataset is shared with, in one short line ('—' when only its owner reads it). */
function sharedWith(d: DatasetView): string {
  const names = (d.sharing ?? []).map((s) => s.group ?? 'site');
  return names.length ? [...new Set(names)].join(', ') : '—';
}
