import { describe, expect, it } from 'vitest';
import { repairCapRate, sendersOf } from './repair-watch.js';

const MiB = 2 ** 20;

describe('repairCapRate', () => {
  it.each([
    [
      'two equal senders, links above b',
      [50e6, 50e6],
      [12e6, 12e6, 12e6],
      [12e6, 12e6],
      2 * 8 * MiB,
    ],
    // The busiest sender sets the time: 60 MB at b while the other is done early.
    [
      'one sender with more to send',
      [60e6, 20e6],
      [12e6, 12e6, 12e6],
      [12e6, 12e6],
      (80e6 / 60e6) * 8 * MiB,
    ],
    // One receiver: everything goes through its download.
    ['one receiver', [50e6, 50e6], [12e6], [12e6, 12e6], 8 * MiB],
    // A sender's link below b: its link sets its pace.
    ['a slow sender link', [50e6], [12e6, 12e6], [4e6], 4e6],
  ])('%s', (_name, bytes, receivers, ups, rate) => {
    const senders = bytes.map((b, i) => ({ bytes: b, bps: ups[i] ?? 0 }));
    expect(repairCapRate({ b: 8 * MiB, senders, receivers })).toBeCloseTo(rate, 0);
  });
});

describe('sendersOf', () => {
  it("sums each twin holder's bytes for the victim's morsels, the short last one included", () => {
    const extents = [
      { copy: 0, first: 0, count: 4, unit: 1, phase: 0, donors: ['v', 'a', 'b'] },
      { copy: 1, first: 0, count: 4, unit: 1, phase: 1, donors: ['v', 'a', 'b'] },
    ];
    // Copy 0: v holds 0 and 3, whose twins (copy 1, phase 1) are on a; copy 1: v holds 2, its
    // twin on b. Morsel 3 is 5 bytes (35 in all).
    const out = sendersOf({ morselSize: 10, morsels: 4, extents }, 35, 'v');
    expect(Object.fromEntries(out)).toEqual({ a: 15, b: 10 });
  });
});
