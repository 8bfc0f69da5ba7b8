import { describe, expect, it } from 'vitest';
import { DECLUSTER_MAX_CYCLES, donorsOfMorsel, type Extent } from '@freeloader/protocol';
import { placePredictive } from './predictive.js';
import {
  auditReplicas,
  declusterCycles,
  placeReplicas,
  rotatedSlot,
  slotShares,
  tallyCopies,
} from './replicas.js';
import { placeRoundRobin } from './round-robin.js';

const ext = (donors: string[], count: number, unit = 1, first = 0, phase = 0): Extent => ({
  copy: 0,
  first,
  count,
  unit,
  phase,
  donors,
});
const space = (free: Record<string, number>) =>
  Object.entries(free).map(([id, freeMorsels]) => ({ id, freeMorsels }));

describe('placeReplicas', () => {
  it.each([
    // name, primary, copies, free (beyond copy 0), placed
    ['two copies rotate over the stripe', [ext(['a', 'b', 'c'], 9)], 2, { a: 3, b: 3, c: 3 }, 2],
    ['three copies over three donors', [ext(['a', 'b', 'c'], 10)], 3, { a: 8, b: 8, c: 8 }, 3],
    ['one donor holds one copy only', [ext(['a'], 5)], 2, { a: 100 }, 1],
    [
      'a tail extent on one donor borrows another',
      [ext(['a', 'b'], 4), ext(['a'], 1, 1, 4)],
      2,
      { a: 3, b: 3 },
      2,
    ],
    ['no room for a second copy', [ext(['a', 'b'], 4)], 2, { a: 1, b: 1 }, 1],
    [
      'more copies than donors stop at the donors',
      [ext(['a', 'b'], 4)],
      5,
      { a: 9, b: 9, c: 9 },
      3,
    ],
    ['stripe units and phase', [ext(['a', 'b', 'c'], 11, 2, 0, 1)], 2, { a: 6, b: 6, c: 6 }, 2],
  ])('%s', (_name, primary, copies, free, placed) => {
    const plan = placeReplicas({ primary, copies, donors: space(free) });
    expect(plan.placed).toBe(placed);
    const morsels = Math.max(...primary.map((e) => e.first + e.count));
    auditReplicas(plan.extents, morsels, placed);
    const copy0 = tallyCopies(primary);
    for (const [id, n] of plan.perDonor) {
      expect(n - (copy0.get(id) ?? 0)).toBeLessThanOrEqual(free[id as keyof typeof free] ?? 0);
    }
  });

  it('keeps the stripe: copy 1 of a round-robin plan spreads evenly over the same donors', () => {
    const donors = space({ a: 100, b: 100, c: 100, d: 100 });
    const primary = placeRoundRobin({ morsels: 40, width: 4, donors }).extents;
    const plan = placeReplicas({
      primary,
      copies: 2,
      donors: space({ a: 10, b: 10, c: 10, d: 10 }),
    });
    expect(plan.placed).toBe(2);
    expect(Object.fromEntries(plan.perDonor)).toEqual({ a: 20, b: 20, c: 20, d: 20 });
    auditReplicas(plan.extents, 40, 2);
  });

  it('separates copies of a predictive plan whose donor list repeats a donor', () => {
    const primary = placePredictive({
      morsels: 60,
      width: 3,
      donors: [
        { id: 'fast', freeMorsels: 100, rate: 3 },
        { id: 'mid', freeMorsels: 100, rate: 2 },
        { id: 'slow', freeMorsels: 100, rate: 1 },
      ],
    }).extents;
    const plan = placeReplicas({
      primary,
      copies: 2,
      donors: space({ fast: 100, mid: 100, slow: 100, spare: 100 }),
    });
    expect(plan.placed).toBe(2);
    auditReplicas(plan.extents, 60, 2);
  });

  it('rejects a copy count below one', () => {
    expect(() => placeReplicas({ primary: [], copies: 0, donors: [] })).toThrow(/copies/);
  });
});

/** Donors holding another copy of the morsels `lost` holds: who sends when `lost` dies. */
function twinHolders(
  extents: readonly Extent[],
  morsels: number,
  lost: string,
): Map<string, number> {
  const out = new Map<string, number>();
  for (let m = 0; m < morsels; m++) {
    const holders = donorsOfMorsel(extents, m);
    if (!holders.includes(lost)) continue;
    for (const h of holders) if (h !== lost) out.set(h, (out.get(h) ?? 0) + 1);
  }
  return out;
}

describe('declustered copies', () => {
  const six = ['a', 'b', 'c', 'd', 'e', 'f'];

  it.each([1, 2, 4])(
    'a lost donor of a round-robin stripe (unit %i) has its twins on all five others, evenly',
    (unit) => {
      const morsels = 6 * 5 * unit * 4;
      const primary = placeRoundRobin({
        morsels,
        width: 6,
        unit,
        donors: space(Object.fromEntries(six.map((d) => [d, morsels]))),
      }).extents;
      const plan = placeReplicas({
        primary,
        copies: 2,
        donors: space(Object.fromEntries(six.map((d) => [d, morsels]))),
      });
      auditReplicas(plan.extents, morsels, 2);
      for (const lost of six) {
        const twins = twinHolders(plan.extents, morsels, lost);
        expect([...twins.keys()].sort()).toEqual(six.filter((d) => d !== lost));
        // Twins of copy 0 and copy 1: 2 × (morsels / 6) spread evenly over 5 senders.
        for (const n of twins.values()) expect(n).toBe((2 * morsels) / 6 / 5);
      }
      for (const n of plan.perDonor.values()) expect(n).toBe((2 * morsels) / 6);
      // One extent per copy-0 extent, the list D × (D − 1) long: compact, not per morsel.
      expect(plan.extents.length).toBe(2 * primary.length);
      for (const e of plan.extents.filter((x) => x.copy === 1)) expect(e.donors.length).toBe(30);
    },
  );

  it('three copies of a 4-wide stripe: never two on one donor, twins on every other donor', () => {
    const primary = [ext(['a', 'b', 'c', 'd'], 48)];
    const plan = placeReplicas({
      primary,
      copies: 3,
      donors: space({ a: 99, b: 99, c: 99, d: 99 }),
    });
    expect(plan.placed).toBe(3);
    auditReplicas(plan.extents, 48, 3);
    expect([...twinHolders(plan.extents, 48, 'a').keys()].sort()).toEqual(['b', 'c', 'd']);
    expect(Object.fromEntries(plan.perDonor)).toEqual({ a: 36, b: 36, c: 36, d: 36 });
  });

  it('caps the cycles (the list stays O(donors)) and keeps short extents short', () => {
    const wide = Array.from({ length: 40 }, (_, i) => `d${i}`);
    expect(declusterCycles(ext(wide, 40 * 100))).toBe(DECLUSTER_MAX_CYCLES);
    expect(declusterCycles(ext(six, 13))).toBe(3);
    expect(declusterCycles(ext(six, 6, 1, 0, 1))).toBe(2);
    expect(declusterCycles(ext(['a', 'b'], 100))).toBe(1);
  });

  it('rotatedSlot shifts every cycle differently and never onto copy 0', () => {
    for (let k = 0; k < 30; k++) expect(rotatedSlot(k, 1, 6)).not.toBe(k % 6);
    expect([0, 1, 2, 3, 4].map((j) => rotatedSlot(j * 6, 1, 6))).toEqual([1, 2, 3, 4, 5]);
    for (let k = 0; k < 30; k++) expect(rotatedSlot(k, 2, 6)).not.toBe(rotatedSlot(k, 1, 6));
  });
});

describe('auditReplicas', () => {
  it('finds two copies of a morsel on one donor', () => {
    const bad = [ext(['a', 'b'], 2), { ...ext(['a', 'c'], 2), copy: 1 }];
    expect(() => auditReplicas(bad, 2, 2)).toThrow(/morsel 0 has two copies on one donor/);
  });
  it('finds a missing copy', () => {
    const bad = [ext(['a', 'b'], 2), { ...ext(['b'], 1), copy: 1 }];
    expect(() => auditReplicas(bad, 2, 2)).toThrow(/morsel 1 has 1 of 2 copies/);
  });
});

describe('slotShares', () => {
  it.each([
    [ext(['a', 'b'], 5, 2), [3, 2]],
    [ext(['a', 'b', 'c'], 4, 1, 0, 2), [1, 1, 2]],
    [ext(['a'], 7, 3), [7]],
  ])('%o → %o', (e, shares) => expect(slotShares(e)).toEqual(shares));
});
