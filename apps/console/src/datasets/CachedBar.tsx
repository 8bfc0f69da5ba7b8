import { Group, Progress, Text } from '@mantine/core';
import type { DatasetView } from '@freeloader/protocol';
import { formatBytes, formatPercent } from '../format';
import type { ImportProgress } from './import-progress';

/** How much of a dataset the cache holds: 'full', a prefix percentage, or 'none'. */
export function cachedLabel(d: Pick<DatasetView, 'cachedBytes' | 'sizeBytes'>): string {
  if (d.sizeBytes === 0 || d.cachedBytes >= d.sizeBytes) return 'full';
  if (d.cachedBytes === 0) return 'none';
  return `prefix ${formatPercent(d.cachedBytes / d.sizeBytes)}`;
}

/**
 * What the cached column says: an importing dataset's progress ("importing 42 %", with bytes),
 * else {@link cachedLabel}.
 *
 * @example cachedText({ state: 'importing', … }, { doneBytes: 1, totalBytes: 4 }) // 'importing 25 %'
 */
export function cachedText(
  d: Pick<DatasetView, 'cachedBytes' | 'sizeBytes' | 'state' | 'replicas'>,
  progress?: ImportProgress,
): { label: string; fraction: number; detail?: string } {
  if (d.state === 'importing') {
    const fraction =
      progress && progress.totalBytes > 0 ? progress.doneBytes / progress.totalBytes : 0;
    // Every copy's donor fetches its morsels: the bytes count all copies.
    const copies = (d.replicas ?? 1) > 1 ? ` (${d.replicas} copies)` : '';
    return {
      label: progress ? `importing ${formatPercent(fraction)}` : 'importing',
      fraction,
      ...(progress
        ? {
            detail: `${formatBytes(progress.doneBytes)} of ${formatBytes(progress.totalBytes)}${copies}`,
          }
        : {}),
    };
  }
  return {
    label: cachedLabel(d),
    fraction: d.sizeBytes === 0 ? 1 : d.cachedBytes / d.sizeBytes,
  };
}

/** A small bar with the cached fraction (or import progress) and its label. */
export function CachedBar({
  dataset,
  progress,
}: {
  dataset: DatasetView;
  progress?: ImportProgress;
}) {
  const t = cachedText(dataset, progress);
  return (
    <Group gap={6} wrap="nowrap" data-testid="cached">
      <Progress
        w={48}
        size="sm"
        value={Math.min(1, t.fraction) * 100}
        color={dataset.state === 'importing' ? 'blue' : t.fraction >= 1 ? 'teal' : 'blue'}
        animated={dataset.state === 'importing'}
        aria-hidden
        style={{ flex: 'none' }}
      />
      <div>
        <Text size="xs" style={{ whiteSpace: 'nowrap' }}>
          {t.label}
        </Text>
        {t.detail && (
          <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
            {t.detail}
          </Text>
        )}
      </div>
    </Group>
  );
}
