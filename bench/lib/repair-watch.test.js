import { describe, expect, it } from 'vitest';
import {
  repairCapRate,
  repairCapRateWithForeground,
  sendersOf,
  servedByDonor,
} from './repair-watch.js';

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

describe('repairCapRateWithForeground', () => {
  it('is repairCapRate without a reader, and counts the time the reader held the link', () => {
    const receivers = [12e6];
    const quiet = [{ bytes: 24e6, bps: 12e6, fgBytes: 0, fgSeconds: 0 }];
    expect(repairCapRateWithForeground({ b: 8e6, senders: quiet, receivers })).toBeCloseTo(
      repairCapRate({ b: 8e6, senders: quiet, receivers }),
      0,
    );
    // 1 s at the 1 MB/s the reader leaves, then 23 MB at b.
    const shared = [{ bytes: 24e6, bps: 12e6, fgBytes: 11e6, fgSeconds: 1 }];
    expect(repairCapRateWithForeground({ b: 8e6, senders: shared, receivers })).toBeCloseTo(
      24e6 / (1 + 23e6 / 8e6),
      0,
    );
  });
});

describe('servedByDonor', () => {
  it("reads each donor's delivered bytes and busy time from get --stats", () => {
    const stderr = [
      'donor                   delivered     busy     rate',
      '  10.77.1.2:7500            12.6 MB    1.25 s    10.1 MB/s',
      '  10.77.1.6:7500             9.0 MB    1.39 s     9.0 MB/s',
    ].join('\n');
    expect(servedByDonor(stderr)).toEqual(
      new Map([
        ['10.77.1.2', { bytes: 12.6e6, seconds: 1.25 }],
        ['10.77.1.6', { bytes: 9e6, seconds: 1.39 }],
      ]),
    );
  });
});
