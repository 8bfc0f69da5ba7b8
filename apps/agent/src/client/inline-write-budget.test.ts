import { describe, expect, it } from 'vitest';
import {
  INLINE_WRITE_BUDGET_MS,
  INLINE_WRITE_WINDOW_MS,
  InlineWriteBudget,
} from './inline-write-budget.js';

const W = INLINE_WRITE_WINDOW_MS;
const B = INLINE_WRITE_BUDGET_MS;

describe('InlineWriteBudget', () => {
  it.each<[string, Array<[number, number]>, number, boolean]>([
    // [case, writes as (at ms, took ms), asked at ms, allowed]
    ['a fresh budget', [], 0, true],
    ['writes within the budget', [[0, B / 2]], 10, true],
    [
      'the budget spent in this window',
      [
        [0, B / 2],
        [5, B / 2],
      ],
      10,
      false,
    ],
    [
      'the next window',
      [
        [0, B / 2],
        [5, B / 2],
      ],
      W,
      true,
    ],
    ['a stall of three budgets, one window on', [[0, 3 * B]], W, false],
    ['a stall of three budgets, paid back', [[0, 3 * B]], 3 * W, true],
    ['a long idle gap forgives no more than it owes', [[0, B]], 100 * W, true],
  ])('%s', (_, writes, at, allowed) => {
    const budget = new InlineWriteBudget(0);
    for (const [when, took] of writes) {
      expect(budget.allows(when)).toBe(true);
      budget.spend(took);
    }
    expect(budget.allows(at)).toBe(allowed);
  });

  it('does not bank idle windows: after a gap, one budget and no more', () => {
    const budget = new InlineWriteBudget(0);
    expect(budget.allows(100 * W)).toBe(true);
    budget.spend(B);
    expect(budget.allows(100 * W + 1)).toBe(false);
  });
});
