import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { TransferView } from '@freeloader/protocol';
import { renderUi } from '../test/render';
import { TransferList } from '../transfers/TransferList';
import { ThrottleBadge } from './ThrottleBadge';

const busy = { throttle: 'contended', throttleReasons: ['cpu 0.93 > 0.75'], rateCap: 262_144 };

describe('ThrottleBadge', () => {
  it('shows the state and reason of a throttled donor, with an accessible label', () => {
    renderUi(<ThrottleBadge d={busy} />);
    const badge = screen.getByLabelText('throttled: contended, cap 0.26 MB/s: cpu 0.93 > 0.75');
    expect(badge).toHaveTextContent('contended');
    expect(badge).toHaveTextContent('cpu 0.93 > 0.75');
  });

  it('an unthrottled donor is its state in plain text, or nothing when quiet', () => {
    const plain = renderUi(<ThrottleBadge d={{ throttle: 'idle' }} />);
    expect(screen.getByText('idle')).toBeInTheDocument();
    expect(screen.queryByTestId('throttle')).toBeNull();
    plain.unmount();
    renderUi(<ThrottleBadge d={{ throttle: 'idle' }} quiet />);
    expect(screen.queryByText('idle')).toBeNull();
  });
});

describe('a transfer card', () => {
  const job = (p: Partial<TransferView>): TransferView => ({
    jobId: `00000000-0000-4000-8000-${Math.random().toString().slice(2, 14)}`,
    kind: 'import',
    state: 'running',
    datasetId: '11111111-1111-4111-8111-111111111111',
    agentId: null,
    doneBytes: 1,
    totalBytes: 10,
    rate: 1,
    etaSeconds: null,
    error: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:10.000Z',
    ...p,
  });

  it('says how many of its running donors are throttled, and why', () => {
    renderUi(
      <TransferList
        transfers={[
          job({ ...busy, throttle: 'contended' }),
          job({ throttle: 'idle' }),
          job({ state: 'done', doneBytes: 10 }),
        ]}
      />,
    );
    expect(screen.getByTestId('throttle-summary')).toHaveTextContent(
      '1 of 2 donors throttled (cpu 0.93 > 0.75)',
    );
    expect(screen.getAllByTestId('throttle')).toHaveLength(1);
  });
});
