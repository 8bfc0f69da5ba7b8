import { describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import type { Chunk } from '../placement/move-extents.js';
import { movedExtents, targetChunks } from './disk-full.js';

const chunk = (first: number, morsels: number[]): Chunk => ({ copy: 0, first, count: 4, morsels });
const donor = (id: string, freeBytes: number) => ({ id, url: `http://${id}`, freeBytes });
const full = (): number => MiB;

describe('targetChunks', () => {
  it('gives each chunk to the donor with the most room left, counting what it already took', () => {
    const got = targetChunks(
      [chunk(0, [0]), chunk(4, [4]), chunk(8, [8])],
      [donor('x', 2 * MiB), donor('y', 3 * MiB)],
      full,
    );
    expect(got).toEqual({
      ok: true,
      moves: [
        { copy: 0, first: 0, count: 4, to: 'y', morsels: [0] },
        { copy: 0, first: 4, count: 4, to: 'x', morsels: [4] },
        { copy: 0, first: 8, count: 4, to: 'y', morsels: [8] },
      ],
      bytes: new Map([
        ['y', 2 * MiB],
        ['x', 1 * MiB],
      ]),
    });
  });

  it.each([
    ['no other donor', [], /room for 1 MiB \(most free: none\)/],
    ['too little room', [donor('x', MiB / 2)], /room for 1 MiB \(most free: 512 KiB\)/],
  ])('fails with the reason when a chunk fits nowhere: %s', (_label, candidates, reason) => {
    const got = targetChunks([chunk(0, [0])], candidates, full);
    expect(got.ok).toBe(false);
    expect(!got.ok && got.reason).toMatch(reason);
  });

  it('never gives a chunk to a donor holding another copy of its morsels, even the roomiest', () => {
    const got = targetChunks(
      [chunk(0, [0])],
      [donor('x', 2 * MiB), donor('y', 9 * MiB)],
      full,
      () => new Set(['y']),
    );
    expect(got.ok && got.moves.map((m) => m.to)).toEqual(['x']);
    const none = targetChunks([chunk(0, [0])], [donor('y', 9 * MiB)], full, () => new Set(['y']));
    expect(none.ok).toBe(false);
  });

  it('counts a short last morsel at its real length', () => {
    const got = targetChunks([chunk(0, [0, 1])], [donor('x', MiB + 10)], (m) =>
      m === 1 ? 10 : MiB,
    );
    expect(got.ok && got.bytes.get('x')).toBe(MiB + 10);
  });
});

describe('movedExtents', () => {
  it('turns each run of consecutive moved morsels into a single-donor extent', () => {
    expect(
      movedExtents([
        { copy: 0, first: 0, count: 8, to: 'b', morsels: [1, 5] },
        { copy: 1, first: 8, count: 8, to: 'c', morsels: [8, 9, 12, 13] },
      ]),
    ).toEqual([
      { copy: 0, first: 1, count: 1, unit: 1, phase: 0, donors: ['b'] },
      { copy: 0, first: 5, count: 1, unit: 1, phase: 0, donors: ['b'] },
      { copy: 1, first: 8, count: 2, unit: 2, phase: 0, donors: ['c'] },
      { copy: 1, first: 12, count: 2, unit: 2, phase: 0, donors: ['c'] },
    ]);
  });
});
