import { describe, expect, it } from 'vitest';
import { formatSeconds, renderBar } from './progress-bar.js';

describe('renderBar', () => {
  it.each([
    [0, 100, 0, '[····················]    0.0%  0 B / 100 B  0.0 MB/s'],
    [50, 100, 25, '[##########··········]   50.0%  50 B / 100 B  0.0 MB/s  ETA 2s'],
    [2 ** 30, 2 ** 30, 112.4e6, '[####################]  100.0%  1 GiB / 1 GiB  112.4 MB/s'],
  ])('%i of %i at %f B/s', (done, total, rate, text) =>
    expect(renderBar(done, total, rate)).toBe(text),
  );
});

describe('formatSeconds', () => {
  it.each([
    [0.2, '1s'],
    [59, '59s'],
    [61, '1m01s'],
    [3725, '1h02m'],
  ])('%f → %s', (s, text) => expect(formatSeconds(s)).toBe(text));
});
