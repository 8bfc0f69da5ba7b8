import { describe, expect, it } from 'vitest';
import { etaSeconds } from './jobs.js';

describe('etaSeconds', () => {
  it.each([
    ['running', 25, 100, 5, 15],
    ['running', 0, 100, 3, 34],
    ['running', 100, 100, 5, 0],
    ['running', 10, 100, 0, null],
    ['queued', 0, 100, 0, null],
    ['done', 100, 100, 0, null],
    ['failed', 40, 100, 9, null],
  ] as const)('%s %i/%i at %i B/s → %s s', (state, done, total, rate, eta) => {
    expect(etaSeconds(state, done, total, rate)).toBe(eta);
  });
});
