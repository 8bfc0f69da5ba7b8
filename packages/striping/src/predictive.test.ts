import { describe, expect, it } from 'vitest';
import { MiB, TiB } from '@freeloader/protocol';
import { auditCover } from './coverage.js';
import { exactStripes, placePredictive, predictiveShares, type RatedDonor } from './predictive.js';

const BIG = 1e9;
/** Seed 000 Table III: morsel-serving rates (MB/s) of benefactors 1–12. */
const TABLE_III = [17.64, 34.4, 44.11, 10.07, 10.07, 10.59, 10.59, 10.06, 10.59, 11.17, 10.5, 11.1];
const rated = (rates: number[], free: number | number[] = BIG): RatedDonor[] =>
  rates.map((rate, i) => ({
    id: String(i + 1),
    rate,
    freeMorsels: Array.isArray(free) ? free[i]! : free,
  }));
const asObject = (m: Map<string, number>) =>
  Object.fromEntries([...m].filter(([, n]) => n > 0).sort(([a], [b]) => Number(a) - Number(b)));

describe('predictiveShares', () => {
  it.each<{ name: string; morsels: number; donors: RatedDonor[]; shares: Record<string, number> }>([
    {
      // The paper prints 162/324/419/95 from slightly different rates; this is B_i·S/A exactly.
      name: 'seed Table III donors 1–4, 1000 morsels (1:3 mix)',
      morsels: 1000,
      donors: rated(TABLE_III.slice(0, 4)),
      shares: { 1: 166, 2: 324, 3: 415, 4: 95 },
    },
    {
      name: 'equal rates split evenly, remainder to the lowest ids',
      morsels: 10,
      donors: rated([5, 5, 5]),
      shares: { 1: 4, 2: 3, 3: 3 },
    },
    {
      name: 'a full donor is capped and the excess re-split by rate',
      morsels: 100,
      donors: rated([3, 1, 1], [20, BIG, BIG]),
      shares: { 1: 20, 2: 40, 3: 40 },
    },
    {
      name: 'caps cascade: filling one pushes another over',
      morsels: 100,
      donors: rated([6, 3, 1], [30, 35, BIG]),
      shares: { 1: 30, 2: 35, 3: 35 },
    },
    {
      name: 'zero-rate donors only take what the others cannot hold',
      morsels: 12,
      donors: rated([0, 2, 0], [10, 8, 10]),
      shares: { 1: 2, 2: 8, 3: 2 },
    },
    {
      name: 'no rate information at all: equal shares',
      morsels: 9,
      donors: rated([0, 0, 0]),
      shares: { 1: 3, 2: 3, 3: 3 },
    },
    {
      name: 'exactly full',
      morsels: 6,
      donors: rated([1, 9], [3, 3]),
      shares: { 1: 3, 2: 3 },
    },
  ])('$name', ({ morsels, donors, shares }) => {
    const got = predictiveShares(morsels, donors);
    expect(asObject(got)).toEqual(shares);
  });

  it.each([1, 7, 999, 1000, 1001, 65_537])(
    'totals are exact and within space for every Table III prefix (%i morsels)',
    (morsels) => {
      for (let w = 1; w <= TABLE_III.length; w++) {
        const free = TABLE_III.slice(0, w).map((_, i) =>
          i % 3 === 0 ? Math.ceil(morsels / w) : BIG,
        );
        const donors = rated(TABLE_III.slice(0, w), free);
        const shares = predictiveShares(morsels, donors);
        expect([...shares.values()].reduce((a, b) => a + b, 0)).toBe(morsels);
        for (const d of donors) expect(shares.get(d.id)).toBeLessThanOrEqual(d.freeMorsels);
        // Uncapped donors stay within one morsel of their proportional share of what is left.
        const capped = donors.filter((d) => shares.get(d.id) === d.freeMorsels);
        const open = donors.filter((d) => !capped.includes(d));
        const left = morsels - capped.reduce((s, d) => s + d.freeMorsels, 0);
        const rate = open.reduce((s, d) => s + d.rate, 0);
        for (const d of open) {
          expect(Math.abs(shares.get(d.id)! - (d.rate * left) / rate)).toBeLessThan(1);
        }
      }
    },
  );

  it('throws NO_SPACE with needed and available', () => {
    expect(() => predictiveShares(10, rated([1, 1], [4, 5]))).toThrow(
      expect.objectContaining({ code: 'NO_SPACE', details: { needed: 10, available: 9 } }),
    );
  });

  it.each([
    [-1, rated([1])],
    [1.5, rated([1])],
    [1, rated([-1])],
    [1, rated([Number.NaN])],
    [1, [...rated([1]), ...rated([1])]],
  ])('rejects malformed input (%s morsels)', (morsels, donors) => {
    expect(() => predictiveShares(morsels, donors)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
  });
});

describe('exactStripes', () => {
  it.each<[string, Record<string, number>, number, number]>([
    ['one short cycle', { a: 2, b: 1 }, 8, 1],
    ['Table III split in a 64-slot cycle', { a: 166, b: 324, c: 415, d: 95 }, 64, 3],
    ['leftovers smaller than a cycle', { a: 7, b: 3 }, 4, 2],
    [
      'a million morsels over ten donors',
      { a: 290_000, b: 280_001, c: 270_002, d: 208_573 },
      256,
      4,
    ],
  ])('%s: exact per-donor counts in few extents', (_, spec, cap, maxExtents) => {
    const shares = new Map(Object.entries(spec));
    const total = Object.values(spec).reduce((a, b) => a + b, 0);
    const extents = exactStripes(shares, 0, cap);
    expect(extents.length).toBeLessThanOrEqual(maxExtents);
    expect(Object.fromEntries(auditCover(extents, total))).toEqual(spec);
  });

  it('interleaves in proportion: every window of one cycle holds each donor near its share', () => {
    const spec = { a: 166, b: 324, c: 415, d: 95 };
    const [first] = exactStripes(new Map(Object.entries(spec)), 0, 256);
    const cycle = first!.donors;
    for (let start = 0; start < cycle.length; start += 16) {
      const window = [...cycle, ...cycle].slice(start, start + 32);
      for (const [id, n] of Object.entries(spec)) {
        const expected = (n / 1000) * 32;
        expect(Math.abs(window.filter((x) => x === id).length - expected)).toBeLessThanOrEqual(2);
      }
    }
  });
});

describe('placePredictive', () => {
  it('places seed Table III 1:3 exactly as predicted, interleaved', () => {
    const plan = placePredictive({ morsels: 1000, width: 4, donors: rated(TABLE_III.slice(0, 4)) });
    expect(asObject(auditCover(plan.extents, 1000))).toEqual({ 1: 166, 2: 324, 3: 415, 4: 95 });
    expect(plan.perDonor).toEqual(auditCover(plan.extents, 1000));
    expect(plan.width).toBe(4);
    // The first 40 morsels already come from all four donors, fast ones most.
    const head = auditCover(
      plan.extents
        .map((e) => ({ ...e, count: Math.min(e.count, Math.max(0, 40 - e.first)) }))
        .filter((e) => e.count > 0),
      40,
    );
    expect(head.get('3')!).toBeGreaterThan(head.get('4')!);
    expect(head.size).toBe(4);
  });

  it.each<{ name: string; width: number; free: number[]; donors: number; morsels: number }>([
    {
      name: 'width picks the donors with most free space',
      width: 2,
      free: [5, 50, 40, 10],
      donors: 2,
      morsels: 60,
    },
    {
      name: 'widens when the chosen cannot hold it',
      width: 2,
      free: [30, 20, 20, 20],
      donors: 3,
      morsels: 60,
    },
    {
      name: 'width larger than the donors there are',
      width: 8,
      free: [9, 9, 9],
      donors: 3,
      morsels: 20,
    },
  ])('$name', ({ width, free, donors, morsels }) => {
    const list = rated([10, 20, 30, 40].slice(0, free.length), free);
    const plan = placePredictive({ morsels, width, donors: list });
    expect(plan.width).toBe(donors);
    const counted = auditCover(plan.extents, morsels);
    expect(counted.size).toBe(donors);
    for (const d of list) expect(counted.get(d.id) ?? 0).toBeLessThanOrEqual(d.freeMorsels);
  });

  it.each([1, 4, 7])('stripe size %i: whole units per slot, exact cover', (unit) => {
    const plan = placePredictive({ morsels: 333, width: 3, unit, donors: rated([10, 20, 30]) });
    const counted = auditCover(plan.extents, 333);
    expect(plan.perDonor).toEqual(counted);
    for (const e of plan.extents) expect(e.unit % unit).toBe(0);
    expect(counted.get('3')! / 333).toBeCloseTo(0.5, 1);
  });

  it('falls back to single morsels when only fragments smaller than a unit are left', () => {
    const plan = placePredictive({
      morsels: 9,
      width: 3,
      unit: 4,
      donors: rated([1, 1, 1], [3, 3, 3]),
    });
    expect(asObject(auditCover(plan.extents, 9))).toEqual({ 1: 3, 2: 3, 3: 3 });
  });

  it('places 1 TiB over 12 Table III donors in a handful of extents, fast', () => {
    const morsels = TiB / MiB;
    // CPU time of this worker, not wall time: other processes on a busy machine do not count.
    const started = process.cpuUsage();
    const plan = placePredictive({ morsels, width: 12, donors: rated(TABLE_III) });
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(500);
    expect(plan.extents.length).toBeLessThanOrEqual(6);
    let next = 0;
    for (const e of plan.extents) {
      expect(e.first).toBe(next);
      next += e.count;
    }
    expect(next).toBe(morsels);
    const exact = predictiveShares(morsels, rated(TABLE_III));
    expect(plan.perDonor).toEqual(new Map([...exact].filter(([, n]) => n > 0)));
  });
});
