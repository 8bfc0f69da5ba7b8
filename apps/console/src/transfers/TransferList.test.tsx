import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { TransferView } from '@freeloader/protocol';
import { renderUi } from '../test/render';
import { TransferList } from './TransferList';

const DS1 = '11111111-1111-4111-8111-111111111111';
const DS2 = '22222222-2222-4222-8222-222222222222';
const A = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const B = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const MiB = 1048576;
let seq = 0;
const job = (p: Partial<TransferView>): TransferView => ({
  jobId: `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`,
  kind: 'import',
  state: 'running',
  datasetId: DS1,
  agentId: A,
  doneBytes: 0,
  totalBytes: 10 * MiB,
  rate: 0,
  etaSeconds: null,
  error: null,
  createdAt: '2025-01-01T00:00:00.000Z',
  updatedAt: '2025-01-01T00:00:10.000Z',
  ...p,
});

const names = { [DS1]: 'climate/tas.nc', [DS2]: 'genomics/reads.bam' };
const card = (name: RegExp) => screen.getByRole('article', { name });

describe('TransferList', () => {
  it('shows an empty state when nothing has been transferred', () => {
    renderUi(<TransferList transfers={[]} />);
    expect(screen.getByText('No transfers yet')).toBeInTheDocument();
  });

  it.each<[string, TransferView[], string[]]>([
    [
      'sums a running import over its donors: percent, bytes, MB/s and ETA',
      [
        job({ agentId: A, doneBytes: 5 * MiB, rate: 2e6 }),
        job({ agentId: B, doneBytes: 5 * MiB, rate: 3e6 }),
      ],
      ['50 %', '10.0 MiB of 20.0 MiB', '5.00 MB/s', 'ETA 2 s', '2 donors'],
    ],
    [
      'keeps a finished import at 100 % without rate or ETA',
      [job({ state: 'done', doneBytes: 10 * MiB })],
      ['100 %', '10.0 MiB of 10.0 MiB', '1 donor'],
    ],
    [
      'shows a failed import with its errors',
      [
        job({ state: 'failed', doneBytes: 2 * MiB, error: 'source answered 404' }),
        job({ agentId: B, state: 'done', doneBytes: 10 * MiB }),
      ],
      ['60 %', 'source answered 404'],
    ],
  ])('%s', (_name, rows, texts) => {
    renderUi(<TransferList transfers={rows} datasetNames={names} donorNames={{ [A]: 'alpha' }} />);
    const c = card(/import climate\/tas\.nc/);
    for (const t of texts) expect(within(c).getByText(t)).toBeInTheDocument();
    expect(
      within(c).getByRole('progressbar', { name: 'progress of climate/tas.nc' }),
    ).toHaveAttribute('aria-valuenow', String(parseInt(texts[0]!)));
    if (rows[0]!.state !== 'running') expect(within(c).queryByText(/MB\/s|ETA/)).toBeNull();
  });

  it('names donors when known and short ids otherwise, in a per-donor breakdown', () => {
    renderUi(
      <TransferList
        transfers={[job({ agentId: A, rate: 1e6 }), job({ agentId: B })]}
        datasetNames={names}
        donorNames={{ [A]: 'alpha' }}
      />,
    );
    const table = screen.getByRole('table', { name: 'per-donor breakdown' });
    expect(within(table).getByText('alpha')).toBeInTheDocument();
    expect(within(table).getByText('bbbbbbbb')).toBeInTheDocument();
    expect(within(table).getByText('1.00 MB/s')).toBeInTheDocument();
  });

  it('lists active transfers before finished ones and links each to its dataset', () => {
    renderUi(
      <TransferList
        transfers={[
          job({
            datasetId: DS2,
            state: 'done',
            doneBytes: 10 * MiB,
            updatedAt: '2025-01-02T00:00:00.000Z',
          }),
          job({ datasetId: DS1, state: 'queued' }),
        ]}
        datasetNames={names}
      />,
    );
    const titles = screen.getAllByRole('article').map((a) => a.getAttribute('aria-label'));
    expect(titles).toEqual(['import climate/tas.nc', 'import genomics/reads.bam']);
    expect(screen.getByRole('link', { name: 'genomics/reads.bam' })).toHaveAttribute(
      'href',
      `/datasets/${DS2}`,
    );
  });
});
