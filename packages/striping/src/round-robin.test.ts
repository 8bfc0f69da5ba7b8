import { describe, expect, it } from 'vitest';
import { donorsOfMorsel, FreeLoaderError, MiB, TiB, type Extent } from '@freeloader/protocol';
import { placeRoundRobin, type DonorSpace } from './round-robin.js';

type Space = Record<string, number>;
interface Case {
  morsels: number;
  width: number;
  unit: number;
  space: Space;
}

const donors = (spec: Space): DonorSpace[] =>
  Object.entries(spec).map(([id, freeMorsels]) => ({ id, freeMorsels }));

/** Recount a plan morsel by morsel and check every invariant a placement must keep. */
function audit(
  plan: ReturnType<typeof placeRoundRobin>,
  morsels: number,
  width: number,
  space: DonorSpace[],
): Map<string, number> {
  const counted = new Map<string, number>();
  for (let m = 0; m < morsels; m++) {
    const holders = donorsOfMorsel(plan.extents, m);
    expect(holders, `morsel ${m}`).toHaveLength(1);
    counted.set(holders[0]!, (counted.get(holders[0]!) ?? 0) + 1);
  }
  expect(donorsOfMorsel(plan.extents, morsels)).toEqual([]);
  expect(plan.perDonor).toEqual(counted);
  for (const d of space) expect(counted.get(d.id) ?? 0).toBeLessThanOrEqual(d.freeMorsels);
  for (const e of plan.extents) {
    expect(e.donors.length).toBeLessThanOrEqual(width);
    expect(new Set(e.donors).size).toBe(e.donors.length);
    expect(e).toMatchObject({ copy: 0, phase: 0 });
  }
  return counted;
}

const ext = (first: number, count: number, unit: number, ids: string[]): Extent => ({
  copy: 0,
  first,
  count,
  unit,
  phase: 0,
  donors: ids,
});

describe('placeRoundRobin', () => {
  it.each<Case & { name: string; extents: Extent[]; perDonor: Space }>([
    {
      name: 'even split over the top width donors',
      morsels: 12,
      width: 3,
      unit: 1,
      space: { a: 10, b: 10, c: 10, d: 10 },
      extents: [ext(0, 12, 1, ['a', 'b', 'c'])],
      perDonor: { a: 4, b: 4, c: 4 },
    },
    {
      name: 'overflow: the chosen fill up, the rest repeats on the next donors',
      morsels: 10,
      width: 2,
      unit: 1,
      space: { a: 3, b: 3, c: 3, d: 3 },
      extents: [ext(0, 6, 1, ['a', 'b']), ext(6, 4, 1, ['c', 'd'])],
      perDonor: { a: 3, b: 3, c: 2, d: 2 },
    },
    {
      name: 'unequal free space: most free first, re-sorted for the overflow',
      morsels: 9,
      width: 2,
      unit: 1,
      space: { a: 2, b: 8, c: 5 },
      extents: [ext(0, 9, 1, ['b', 'c'])],
      perDonor: { b: 5, c: 4 },
    },
    {
      name: 'unequal free space with overflow onto a third donor',
      morsels: 14,
      width: 2,
      unit: 1,
      space: { a: 4, b: 8, c: 5 },
      extents: [ext(0, 10, 1, ['b', 'c']), ext(10, 4, 1, ['a', 'b'])],
      perDonor: { a: 2, b: 7, c: 5 },
    },
    {
      name: 'width decrements when fewer donors have space',
      morsels: 8,
      width: 4,
      unit: 1,
      space: { a: 6, b: 2, c: 0 },
      extents: [ext(0, 4, 1, ['a', 'b']), ext(4, 4, 1, ['a'])],
      perDonor: { a: 6, b: 2 },
    },
    {
      name: 'unit > 1 stripes whole units, tail exact',
      morsels: 11,
      width: 2,
      unit: 4,
      space: { a: 20, b: 20 },
      extents: [ext(0, 11, 4, ['a', 'b'])],
      perDonor: { a: 7, b: 4 },
    },
    {
      name: 'short tail touches only the donors it reaches',
      morsels: 5,
      width: 4,
      unit: 4,
      space: { a: 9, b: 9, c: 9, d: 9 },
      extents: [ext(0, 5, 4, ['a', 'b'])],
      perDonor: { a: 4, b: 1 },
    },
    {
      name: 'donors without room for a unit are skipped while others have it',
      morsels: 8,
      width: 2,
      unit: 4,
      space: { a: 100, b: 3 },
      extents: [ext(0, 8, 4, ['a'])],
      perDonor: { a: 8 },
    },
    {
      name: 'fragments smaller than a unit are used when nothing else is left',
      morsels: 7,
      width: 3,
      unit: 4,
      space: { a: 3, b: 2, c: 2 },
      extents: [ext(0, 6, 2, ['a', 'b', 'c']), ext(6, 1, 1, ['a'])],
      perDonor: { a: 3, b: 2, c: 2 },
    },
    {
      name: 'ties are broken by id',
      morsels: 4,
      width: 2,
      unit: 1,
      space: { z: 5, y: 5, x: 5 },
      extents: [ext(0, 4, 1, ['x', 'y'])],
      perDonor: { x: 2, y: 2 },
    },
    {
      name: 'an empty dataset places nothing',
      morsels: 0,
      width: 2,
      unit: 1,
      space: { a: 0 },
      extents: [],
      perDonor: {},
    },
  ])('$name', ({ morsels, width, unit, space, extents, perDonor }) => {
    const list = donors(space);
    const plan = placeRoundRobin({ morsels, width, unit, donors: list });
    expect(plan.extents).toEqual(extents);
    expect(Object.fromEntries(audit(plan, morsels, width, list))).toEqual(perDonor);
  });

  it.each<Case>([
    { morsels: 31, width: 3, unit: 2, space: { a: 7, b: 11, c: 5, d: 9 } },
    { morsels: 100, width: 4, unit: 3, space: { a: 1, b: 50, c: 2, d: 30, e: 17 } },
    { morsels: 64, width: 5, unit: 8, space: { a: 13, b: 13, c: 13, d: 13, e: 12 } },
    { morsels: 40, width: 1, unit: 7, space: { a: 10, b: 10, c: 10, d: 10 } },
  ])('fills exactly to capacity: %o', ({ morsels, width, unit, space }) => {
    const list = donors(space);
    const plan = placeRoundRobin({ morsels, width, unit, donors: list });
    audit(plan, morsels, width, list);
    expect(plan.extents.length).toBeLessThanOrEqual(2 * list.length + 1);
  });

  it('throws NO_SPACE with needed and available before planning anything', () => {
    const run = () => placeRoundRobin({ morsels: 10, width: 2, donors: donors({ a: 4, b: 5 }) });
    expect(run).toThrow(FreeLoaderError);
    expect(run).toThrow(/cannot place 10 morsels: donors have 9 morsels free/);
    try {
      run();
    } catch (e) {
      expect((e as FreeLoaderError).code).toBe('NO_SPACE');
      expect((e as FreeLoaderError).details).toEqual({ needed: 10, available: 9 });
    }
  });

  it.each<Case>([
    { morsels: -1, width: 1, unit: 1, space: { a: 1 } },
    { morsels: 1.5, width: 1, unit: 1, space: { a: 2 } },
    { morsels: 1, width: 0, unit: 1, space: { a: 1 } },
    { morsels: 1, width: 1, unit: 0, space: { a: 1 } },
    { morsels: 1, width: 1, unit: 1, space: { a: -1, b: 3 } },
  ])('rejects malformed input %o', ({ morsels, width, unit, space }) => {
    expect(() => placeRoundRobin({ morsels, width, unit, donors: donors(space) })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
  });

  it('rejects a donor listed twice', () => {
    const list = [
      { id: 'a', freeMorsels: 1 },
      { id: 'a', freeMorsels: 1 },
    ];
    expect(() => placeRoundRobin({ morsels: 1, width: 1, donors: list })).toThrow(/listed twice/);
  });

  it('places 1 TiB of 1 MiB morsels over 12 unequal donors in a handful of extents, fast', () => {
    const morsels = TiB / MiB;
    const list = Array.from({ length: 12 }, (_, i) => ({
      id: `d${String(i).padStart(2, '0')}`,
      freeMorsels: 50_000 + i * 20_011,
    }));
    // CPU time of this worker, not wall time: other processes on a busy machine do not count.
    const started = process.cpuUsage();
    const plan = placeRoundRobin({ morsels, width: 4, unit: 4, donors: list });
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(200);
    expect(plan.extents.length).toBeLessThanOrEqual(2 * 12);
    // contiguous cover of [0, morsels) and per-donor totals within free space
    let next = 0;
    for (const e of plan.extents) {
      expect(e.first).toBe(next);
      next += e.count;
    }
    expect(next).toBe(morsels);
    expect([...plan.perDonor.values()].reduce((a, b) => a + b, 0)).toBe(morsels);
    for (const d of list) {
      expect(plan.perDonor.get(d.id) ?? 0).toBeLessThanOrEqual(d.freeMorsels);
    }
    // spot-check ownership at extent boundaries
    for (const e of plan.extents) {
      expect(donorsOfMorsel(plan.extents, e.first)).toHaveLength(1);
      expect(donorsOfMorsel(plan.extents, e.first + e.count - 1)).toHaveLength(1);
    }
  });
});
