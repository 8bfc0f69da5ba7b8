import { describe, expect, it } from 'vitest';
import type { Extent } from '@fl-protocol/placement';
import { morselsPerDonor, placementCells } from './placement-grid';

const ext = (p: Partial<Extent>): Extent => ({
  copy: 0,
  first: 0,
  count: 6,
  unit: 1,
  phase: 0,
  donors: ['A', 'B', 'C'],
  ...p,
});

describe('placementCells', () => {
  it.each<[string, Extent[], number, number, string]>([
    ['one morsel a cell, round robin', [ext({})], 6, 100, 'A0 B1 C2 A3 B4 C5'],
    ['stripes of two with a phase', [ext({ unit: 2, phase: 1 })], 6, 100, 'B0 B1 C2 C3 A4 A5'],
    ['runs when morsels outnumber cells', [ext({})], 6, 3, 'A0-1 C2-3 B4-5'],
    ['gaps no extent covers', [ext({ first: 2, count: 2 })], 4, 100, '-0 -1 A2 B3'],
  ])('%s', (_name, extents, morsels, maxCells, expected) => {
    const text = placementCells(extents, morsels, maxCells)
      .map((c) => `${c.donor ?? '-'}${c.first}${c.last > c.first ? `-${c.last}` : ''}`)
      .join(' ');
    expect(text).toBe(expected);
  });
});

describe('morselsPerDonor', () => {
  it.each<[string, Extent[], Record<string, number>]>([
    ['round robin', [ext({ count: 7 })], { A: 3, B: 2, C: 2 }],
    ['stripes of three, short last stripe', [ext({ count: 7, unit: 3 })], { A: 3, B: 3, C: 1 }],
    ['two copies', [ext({ count: 2 }), ext({ copy: 1, count: 2, phase: 1 })], { A: 1, B: 2, C: 1 }],
  ])('%s', (_name, extents, expected) => {
    expect(Object.fromEntries(morselsPerDonor(extents))).toEqual(expected);
  });
});
