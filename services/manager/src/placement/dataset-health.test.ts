import { describe, expect, it } from 'vitest';
import type { Extent } from '@freeloader/protocol';
import { datasetHealth, type CopyFault } from './dataset-health.js';

const e = (copy: number, donors: string[], count = 4, first = 0, unit = 1, phase = 0): Extent => ({
  copy,
  first,
  count,
  unit,
  phase,
  donors,
});
const liveOnly =
  (...ids: string[]) =>
  (d: string) =>
    ids.includes(d);

describe('datasetHealth', () => {
  it.each<[string, Extent[], number, (d: string) => boolean, CopyFault[], object]>([
    [
      'nothing placed',
      [],
      2,
      liveOnly(),
      [],
      { morsels: 0, liveMin: 0, liveAvg: 0, atRisk: 0, sourceOnly: 0 },
    ],
    [
      'two copies, all live',
      [e(0, ['a', 'b']), e(1, ['b', 'a'])],
      2,
      liveOnly('a', 'b'),
      [],
      { morsels: 4, liveMin: 2, liveAvg: 2, atRisk: 0, sourceOnly: 0 },
    ],
    [
      'one of two donors dead',
      [e(0, ['a', 'b']), e(1, ['b', 'a'])],
      2,
      liveOnly('a'),
      [],
      { liveMin: 1, liveAvg: 1, atRisk: 4, sourceOnly: 0 },
    ],
    [
      'both dead: only at the source',
      [e(0, ['a', 'b']), e(1, ['b', 'a'])],
      2,
      liveOnly(),
      [],
      { liveMin: 0, liveAvg: 0, atRisk: 4, sourceOnly: 4 },
    ],
    [
      'under-replicated: one copy of two',
      [e(0, ['a'])],
      2,
      liveOnly('a'),
      [],
      { liveMin: 1, liveAvg: 1, atRisk: 4, sourceOnly: 0 },
    ],
    [
      'one copy wanted and held',
      [e(0, ['a', 'b'])],
      1,
      liveOnly('a', 'b'),
      [],
      { liveMin: 1, atRisk: 0, sourceOnly: 0 },
    ],
    [
      'single copy on a dead donor',
      [e(0, ['a', 'b'])],
      1,
      liveOnly('a'),
      [],
      { liveMin: 0, liveAvg: 0.5, atRisk: 2, sourceOnly: 2 },
    ],
    [
      'a faulty copy is not live',
      [e(0, ['a', 'b']), e(1, ['b', 'a'])],
      2,
      liveOnly('a', 'b'),
      [{ copy: 1, morsel: 2 }],
      { liveMin: 1, liveAvg: 1.75, atRisk: 1, sourceOnly: 0 },
    ],
    [
      'a fault on a dead donor is not counted twice',
      [e(0, ['a', 'b']), e(1, ['b', 'a'])],
      2,
      liveOnly('a'),
      [{ copy: 1, morsel: 0 }],
      { liveMin: 1, atRisk: 4, sourceOnly: 0 },
    ],
    [
      'a prefix: only placed morsels count',
      [e(0, ['a'], 3), e(1, ['b'], 3)],
      2,
      liveOnly('a', 'b'),
      [],
      { morsels: 3, liveMin: 2, atRisk: 0 },
    ],
    [
      'stripe units and phase',
      [e(0, ['a', 'b'], 6, 0, 2, 1), e(1, ['b', 'a'], 6, 0, 2, 1)],
      2,
      liveOnly('b'),
      [],
      { morsels: 6, liveMin: 1, atRisk: 6, sourceOnly: 0 },
    ],
    [
      'three copies, one donor dead',
      [e(0, ['a', 'b', 'c'], 3), e(1, ['b', 'c', 'a'], 3), e(2, ['c', 'a', 'b'], 3)],
      3,
      liveOnly('a', 'b'),
      [],
      { liveMin: 2, liveAvg: 2, atRisk: 3, sourceOnly: 0 },
    ],
  ])('%s', (_name, extents, wanted, live, faults, expected) => {
    expect(datasetHealth({ extents, wanted, live, faults })).toMatchObject({ wanted, ...expected });
  });
});
