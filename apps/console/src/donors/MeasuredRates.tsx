import { Text } from '@mantine/core';
import type { AgentDiagnostics, DonorRateView } from '@freeloader/protocol';
import { formatRate } from '../format';
import { ArrowDownIcon, ArrowUpIcon } from '../ui/icons';

const rate = (r: number | null | undefined) => (r ? formatRate(r) : '—');

/**
 * What the donor's join-time probe measured (seed 000 §5.2.1): its local disk read rate (marked
 * when the page cache answered, an upper bound) and its network rates to the manager.
 */
export function MeasuredRates({ d }: { d: AgentDiagnostics | undefined }) {
  if (!d) {
    return (
      <Text size="xs" c="dimmed">
        not measured yet
      </Text>
    );
  }
  return (
    <>
      <Text size="xs" data-testid="disk-read-rate">
        disk {rate(d.diskReadRate)}
        {d.diskCached ? ' (cached)' : ''}
      </Text>
      <Text size="xs" data-testid="network-rate">
        net <ArrowDownIcon size={12} title="download" /> {rate(d.downloadRate)}{' '}
        <ArrowUpIcon size={12} title="upload" /> {rate(d.uploadRate)}
      </Text>
    </>
  );
}

/** The decaying average delivery rate clients observed from the donor, and over how many reads. */
export function ObservedRate({ r }: { r: DonorRateView | undefined }) {
  if (!r) {
    return (
      <Text size="xs" c="dimmed" data-testid="observed-rate">
        no reads yet
      </Text>
    );
  }
  return (
    <Text size="xs" data-testid="observed-rate">
      {formatRate(r.rate)}
      <Text span c="dimmed">
        {' '}
        ({r.samples} {r.samples === 1 ? 'read' : 'reads'}
        {r.failures > 0 ? `, ${r.failures} failed` : ''})
      </Text>
    </Text>
  );
}
