import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  it.each([
    [0, 1, 500],
    [1, 1, 1000],
    [3, 1, 4000],
    [6, 1, 30_000],
    [1000, 1, 30_000],
    [3, 0.5, 2000],
    [0, 0, 250],
  ])('attempt %i, random %f → %i ms', (attempt, r, ms) => {
    expect(backoffDelay(attempt, 500, 30_000, () => r)).toBe(ms);
  });
});
