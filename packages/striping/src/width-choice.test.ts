import { describe, expect, it } from 'vitest';
import { chooseWidth, type DonorActivity } from './width-choice.js';

/** 'i' idle, 'A' active, in placement order. */
const pool = (spec: string): DonorActivity[] =>
  [...spec].map((c, i) => ({ id: `d${i}`, active: c === 'A' }));

describe('chooseWidth', () => {
  it.each<[string, number, string, { width: number; active: number; widened: boolean }]>([
    ['all idle: as requested', 4, 'iiiiiiiiii', { width: 4, active: 0, widened: false }],
    [
      'an active owner outside the stripe changes nothing',
      4,
      'iiiiA',
      { width: 4, active: 0, widened: false },
    ],
    [
      'an active owner in the stripe doubles it',
      4,
      'iAiiiiiiiiii',
      { width: 8, active: 1, widened: true },
    ],
    [
      'small stripes widen to at least 6 (seed Fig. 12)',
      2,
      'Aiiiiiiii',
      { width: 6, active: 1, widened: true },
    ],
    ['widening stops at the donors there are', 4, 'iiAii', { width: 5, active: 1, widened: true }],
    ['nothing to widen into', 3, 'AAA', { width: 3, active: 3, widened: false }],
    ['requested more than there are', 8, 'iii', { width: 3, active: 0, widened: false }],
    ['no donors at all', 4, '', { width: 0, active: 0, widened: false }],
  ])('%s', (_, requested, spec, want) => {
    expect(chooseWidth({ requested, donors: pool(spec) })).toEqual(want);
  });

  it('respects the protocol ceiling and a custom factor', () => {
    const donors = pool('A'.repeat(100));
    expect(chooseWidth({ requested: 40, donors, maxWidth: 64 }).width).toBe(64);
    expect(chooseWidth({ requested: 4, donors, factor: 3, minWidth: 1 }).width).toBe(12);
  });

  it('each active donor serves a smaller share once widened', () => {
    const donors = pool('Aiiiiiiiiiiiiiii');
    for (const requested of [1, 2, 4, 8]) {
      const { width } = chooseWidth({ requested, donors });
      expect(1 / width).toBeLessThanOrEqual(1 / (2 * requested));
    }
  });

  it.each([0, 1.5, -2])('rejects requested width %s', (requested) => {
    expect(() => chooseWidth({ requested, donors: pool('ii') })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
  });
});
