import { Box, Group, Stack, Table, Text, Tooltip } from '@mantine/core';
import type { DatasetPlacement } from '@freeloader/protocol';
import { formatBytes } from '../format';
import { EmptyState } from '../ui/feedback';
import { StateBadge } from '../ui/StateBadge';
import { morselsPerDonor, placementCells } from './placement-grid';

const PALETTE = [
  'indigo',
  'teal',
  'orange',
  'grape',
  'cyan',
  'lime',
  'pink',
  'yellow',
  'blue',
  'red',
];
const colorOf = (i: number) => `var(--mantine-color-${PALETTE[i % PALETTE.length]}-6)`;

/**
 * Which donor holds which stripes: a grid of morsels coloured by donor (runs of morsels when
 * there are many), and a legend table with each donor's share, which is also what screen
 * readers get.
 */
export function PlacementMap({ placement }: { placement: DatasetPlacement }) {
  const { extents, morsels, morselSize } = placement;
  if (extents.length === 0 || morsels === 0) {
    return <EmptyState title="Not placed">This dataset holds no morsels on any donor.</EmptyState>;
  }
  const order = [...new Set(extents.flatMap((e) => e.donors))];
  const index = new Map(order.map((id, i) => [id, i]));
  const names = new Map(placement.donors.map((d) => [d.id, d]));
  const counts = morselsPerDonor(extents);
  const cells = placementCells(extents, morsels);
  const per = cells[0] ? cells[0].last - cells[0].first + 1 : 1;
  // Few morsels get larger squares; many get small ones so the map stays a few rows high.
  const cell = cells.length <= 256 ? 18 : 12;
  return (
    <Stack gap="sm">
      <Box
        role="img"
        aria-label={`placement map: ${morsels} morsels over ${order.length} donors`}
        style={{
          display: 'grid',
          gridTemplateColumns: `repeat(auto-fill, ${cell}px)`,
          gap: 2,
        }}
      >
        {cells.map((c) => {
          const donor = c.donor ? (names.get(c.donor)?.name ?? c.donor.slice(0, 8)) : 'unplaced';
          const range = c.last > c.first ? `morsels ${c.first}–${c.last}` : `morsel ${c.first}`;
          return (
            <Tooltip key={c.first} label={`${range}: ${donor}`} openDelay={150}>
              <Box
                data-testid="placement-cell"
                data-donor={c.donor ?? ''}
                h={cell}
                style={{
                  borderRadius: 2,
                  background: c.donor
                    ? colorOf(index.get(c.donor)!)
                    : 'var(--mantine-color-gray-3)',
                }}
              />
            </Tooltip>
          );
        })}
      </Box>
      <Text size="xs" c="dimmed">
        Each square is {per === 1 ? 'one morsel' : `${per} morsels`} of {formatBytes(morselSize)},
        coloured by the donor holding it.
      </Text>
      <Table aria-label="donors holding this dataset" fz="sm" verticalSpacing={4}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Donor</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th ta="right">Morsels</Table.Th>
            <Table.Th ta="right">Share</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {order.map((id, i) => {
            const d = names.get(id);
            const n = counts.get(id) ?? 0;
            return (
              <Table.Tr key={id}>
                <Table.Td>
                  <Group gap={6} wrap="nowrap">
                    <Box
                      w={12}
                      h={12}
                      style={{ borderRadius: 2, background: colorOf(i) }}
                      aria-hidden
                    />
                    <Text size="sm">{d?.name ?? id.slice(0, 8)}</Text>
                  </Group>
                </Table.Td>
                <Table.Td>
                  <StateBadge state={d?.state ?? 'unknown'} />
                </Table.Td>
                <Table.Td ta="right">{n}</Table.Td>
                <Table.Td ta="right">{formatBytes(n * morselSize)}</Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}
