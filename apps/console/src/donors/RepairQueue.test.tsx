import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { RepairQueueView } from '@freeloader/protocol';
import { renderUi } from '../test/render';
import { RepairSummary } from './RepairQueue';

const empty: RepairQueueView = {
  waitingUnits: 0,
  runningUnits: 0,
  waitingMorsels: 0,
  runningMorsels: 0,
  bytes: 0,
  rate: 0,
  etaSeconds: 0,
  doneBytesLastHour: 0,
  repairAfterMs: 4 * 3600_000,
  repairAfterBasis: 'fallback',
  units: [],
};

describe('repair summary', () => {
  it.each<[string, RepairQueueView, RegExp]>([
    ['nothing to repair', empty, /Every copy is where it should be/],
    [
      'work moving, with an ETA',
      {
        ...empty,
        waitingMorsels: 6,
        runningMorsels: 2,
        bytes: 8 * 2 ** 20,
        rate: 2 ** 20,
        etaSeconds: 8,
      },
      /8 morsels \(8\.00 MiB\) to re-create: 2 moving at .*, done in about 8/,
    ],
    [
      'work waiting, nothing moving: no ETA',
      { ...empty, waitingMorsels: 3, bytes: 3 * 2 ** 20, etaSeconds: null },
      /3 morsels .* to re-create: 0 moving at [^,]*$/m,
    ],
  ])('%s', (_name, q, text) => {
    renderUi(<RepairSummary q={q} />);
    expect(screen.getByLabelText('repair summary').textContent?.split(' · ')[0]).toMatch(text);
  });

  it('says when a silent donor counts as lost, and why', () => {
    renderUi(<RepairSummary q={empty} />);
    expect(screen.getByLabelText('repair summary')).toHaveTextContent(/lost after 4.*\(fallback\)/);
  });
});
