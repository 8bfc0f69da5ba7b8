import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { AgentDiagnostics, DonorRateView } from '@freeloader/protocol';
import { renderUi } from '../test/render';
import { MeasuredRates, ObservedRate } from './MeasuredRates';

const probe: AgentDiagnostics = {
  diskReadRate: 512e6,
  diskCached: false,
  downloadRate: 117.5e6,
  uploadRate: 11.2e6,
  measuredAt: '2025-01-01T00:00:00.000Z',
};

describe('donor rates', () => {
  it.each<[string, AgentDiagnostics | undefined, string, string | null]>([
    ['a full probe', probe, 'disk 512 MB/s', 'net download 118 MB/s upload 11.2 MB/s'],
    ['a page-cache disk read', { ...probe, diskCached: true }, 'disk 512 MB/s (cached)', null],
    [
      'a failed network probe',
      { ...probe, uploadRate: null },
      'disk 512 MB/s',
      'net download 118 MB/s upload —',
    ],
    ['no probe yet', undefined, 'not measured yet', null],
  ])('shows %s', (_name, d, disk, net) => {
    renderUi(<MeasuredRates d={d} />);
    expect(screen.getByText(disk)).toBeInTheDocument();
    if (net) expect(screen.getByTestId('network-rate')).toHaveTextContent(net);
  });

  it.each<[string, DonorRateView | undefined, string]>([
    ['history', { agentId: 'a', rate: 42e6, samples: 9, failures: 0 }, '42.0 MB/s (9 reads)'],
    [
      'failures',
      { agentId: 'a', rate: 5e6, samples: 3, failures: 1 },
      '5.00 MB/s (3 reads, 1 failed)',
    ],
    ['one read', { agentId: 'a', rate: 1e6, samples: 1, failures: 0 }, '1.00 MB/s (1 read)'],
    ['no history', undefined, 'no reads yet'],
  ])('shows the observed rate with %s', (_name, r, text) => {
    renderUi(<ObservedRate r={r} />);
    expect(screen.getByTestId('observed-rate')).toHaveTextContent(text);
  });
});
