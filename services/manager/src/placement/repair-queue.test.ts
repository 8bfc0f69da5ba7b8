import { describe, expect, it } from 'vitest';
import {
  REPAIR_AFTER_FALLBACK_MS,
  REPAIR_AFTER_MAX_MS,
  REPAIR_AFTER_MIN_MS,
  type Extent,
} from '@freeloader/protocol';
import { repairAfter } from './repair-after.js';
import { pickRepairDestination, type RepairCandidate } from './repair-destination.js';
import { byDanger, repairWorkOf, stripeUnits, type RepairScan } from './repair-work.js';

const MIN = 60_000;

describe('repairAfter', () => {
  it.each([
    ['an admin value wins', [], 42_000, 42_000, 'configured'],
    [
      'too few outages: the fallback',
      Array(19).fill(30 * MIN),
      undefined,
      REPAIR_AFTER_FALLBACK_MS,
      'fallback',
    ],
    [
      'the 95th percentile of enough outages',
      [...Array(19).fill(20 * MIN), 600 * MIN],
      undefined,
      20 * MIN,
      'observed',
    ],
    [
      'the 95th percentile, nearest rank',
      Array.from({ length: 100 }, (_, i) => (i + 1) * MIN),
      undefined,
      95 * MIN,
      'observed',
    ],
    ['clamped below', Array(40).fill(1_000), undefined, REPAIR_AFTER_MIN_MS, 'observed'],
    [
      'clamped above',
      Array(40).fill(REPAIR_AFTER_MAX_MS * 3),
      undefined,
      REPAIR_AFTER_MAX_MS,
      'observed',
    ],
  ] as const)('%s', (_, outages, configured, ms, basis) => {
    expect(repairAfter(outages, configured)).toEqual({ ms, basis });
  });
});

describe('pickRepairDestination', () => {
  const c = (id: string, freeBytes: number, transfers: number): RepairCandidate => ({
    id,
    freeBytes,
    transfers,
  });
  it.each([
    ['least transfers wins', [c('a', 9, 3), c('b', 5, 1)], 4, [], [], 'b'],
    ['ties: most free space', [c('a', 9, 1), c('b', 5, 1)], 4, [], [], 'a'],
    ['ties on both: smaller id', [c('b', 9, 1), c('a', 9, 1)], 4, [], [], 'a'],
    ['never a holder of the morsels', [c('a', 9, 0), c('b', 9, 5)], 4, ['a'], [], 'b'],
    ['never a busy or departing donor', [c('a', 9, 0), c('b', 9, 5)], 4, [], ['a'], 'b'],
    ['needs room for the unit', [c('a', 3, 0), c('b', 4, 5)], 4, [], [], 'b'],
    ['nobody fits', [c('a', 3, 0)], 4, [], [], undefined],
  ] as const)('%s', (_, candidates, bytes, holders, excluded, want) => {
    expect(pickRepairDestination(candidates, bytes, new Set(holders), new Set(excluded))).toBe(
      want,
    );
  });
});

describe('byDanger', () => {
  it('orders fewest live copies first, then reason, then age', () => {
    const units = [
      { name: 'leaving-1', liveCopies: 1, reason: 'leaving', enqueuedAt: 1 },
      { name: 'lost-1-late', liveCopies: 1, reason: 'lost', enqueuedAt: 9 },
      { name: 'lost-1-early', liveCopies: 1, reason: 'lost', enqueuedAt: 2 },
      { name: 'fault-0', liveCopies: 0, reason: 'fault', enqueuedAt: 5 },
      { name: 'missing-2', liveCopies: 2, reason: 'missing', enqueuedAt: 0 },
    ] as const;
    expect([...units].sort(byDanger).map((u) => u.name)).toEqual([
      'fault-0',
      'lost-1-early',
      'lost-1-late',
      'leaving-1',
      'missing-2',
    ]);
  });
});

describe('stripeUnits', () => {
  const ext = (first: number, count: number, unit: number): Extent => ({
    copy: 0,
    first,
    count,
    unit,
    phase: 0,
    donors: ['a'],
  });
  it.each([
    [
      'unit 1',
      ext(0, 4, 1),
      1,
      3,
      [
        [1, 1],
        [2, 1],
      ],
    ],
    [
      'unit 4, clipped to the extent',
      ext(2, 10, 4),
      7,
      12,
      [
        [6, 4],
        [10, 2],
      ],
    ],
  ] as const)('%s', (_, e, from, to, want) => {
    expect(stripeUnits(e, from, to)).toEqual(want);
  });
});

describe('repairWorkOf', () => {
  const ab: Extent = { copy: 0, first: 0, count: 4, unit: 1, phase: 0, donors: ['a', 'b'] };
  const ba: Extent = { copy: 1, first: 0, count: 4, unit: 1, phase: 0, donors: ['b', 'a'] };
  const scan = (over: Partial<RepairScan>): RepairScan => ({
    sizeBytes: 4,
    cachedBytes: 4,
    morselSize: 1,
    replicas: 1,
    extents: [ab],
    departing: new Map(),
    readable: () => true,
    faults: [],
    ...over,
  });
  const brief = (s: RepairScan) =>
    repairWorkOf(s).work.map((w) => [w.reason, w.copy, w.morsels, w.from, w.liveCopies]);

  it.each([
    ['nothing to do', scan({}), []],
    [
      'a missing copy, one run per stripe unit of the other copy',
      scan({ replicas: 2 }),
      [
        ['missing', 1, [0], null, 1],
        ['missing', 1, [1], null, 1],
        ['missing', 1, [2], null, 1],
        ['missing', 1, [3], null, 1],
      ],
    ],
    [
      'a lost donor with a second copy elsewhere',
      scan({
        replicas: 2,
        extents: [ab, ba],
        departing: new Map([['a', 'lost']]),
        readable: (d) => d !== 'a',
      }),
      [
        ['lost', 0, [0], 'a', 1],
        ['lost', 0, [2], 'a', 1],
        ['lost', 1, [1], 'a', 1],
        ['lost', 1, [3], 'a', 1],
      ],
    ],
    [
      'a lost only copy: live copies 0 (the source seeds it)',
      scan({ departing: new Map([['b', 'lost']]), readable: (d) => d !== 'b' }),
      [
        ['lost', 0, [1], 'b', 0],
        ['lost', 0, [3], 'b', 0],
      ],
    ],
    [
      'a leaving donor still counts as a live copy',
      scan({ departing: new Map([['b', 'leaving']]) }),
      [
        ['leaving', 0, [1], 'b', 1],
        ['leaving', 0, [3], 'b', 1],
      ],
    ],
    [
      'a faulty copy is not a live one',
      scan({ faults: [{ copy: 0, morsel: 2, agentId: 'a' }] }),
      [['fault', 0, [2], 'a', 0]],
    ],
  ] as const)('%s', (_, s, want) => {
    expect(brief(s)).toEqual(want);
  });

  it('reports fault rows that name a donor placement no longer uses', () => {
    const r = repairWorkOf(scan({ faults: [{ copy: 0, morsel: 2, agentId: 'b' }] }));
    expect(r.work).toEqual([]);
    expect(r.staleFaults).toEqual([{ copy: 0, morsel: 2 }]);
  });

  it('covers only the cached prefix', () => {
    const s = scan({ replicas: 2, sizeBytes: 8, cachedBytes: 2, extents: [{ ...ab, count: 2 }] });
    expect(brief(s).map((w) => w[2])).toEqual([[0], [1]]);
  });
});
