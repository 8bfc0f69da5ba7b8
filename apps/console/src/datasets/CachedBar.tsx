import { Group, Progress, Text } from '@mantine/core';
import type { DatasetView } from '@freeloader/protocol';
import { formatPercent } from '../format';

/** How much of a dataset the cache holds: 'full', a prefix percentage, or 'none'. */
export function cachedLabel(d: Pick<DatasetView, 'cachedBytes' | 'sizeBytes'>): string {
  if (d.sizeBytes === 0 || d.cachedBytes >= d.sizeBytes) return 'full';
  if (d.cachedBytes === 0) return 'none';
  return `prefix ${formatPercent(d.cachedBytes / d.sizeBytes)}`;
}

/** A small bar with the cached fraction and its label. */
export function CachedBar({ dataset }: { dataset: DatasetView }) {
  const fraction = dataset.sizeBytes === 0 ? 1 : dataset.cachedBytes / dataset.sizeBytes;
  return (
    <Group gap={6} wrap="nowrap">
      <Progress
        w={60}
        size="sm"
        value={fraction * 100}
        color={fraction >= 1 ? 'teal' : 'blue'}
        aria-hidden
      />
      <Text size="xs">{cachedLabel(dataset)}</Text>
    </Group>
  );
}
