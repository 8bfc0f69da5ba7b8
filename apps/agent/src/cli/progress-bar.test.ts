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
    [0, '0s'],
    [0.2, '1s'],
    [59, '59s'],
    [59.5, '1m00s'],
    [60, '1m00s'],
    [61, '1m01s'],
    [119.2, '2m00s'],
    [239.6, '4m00s'],
    [3599, '59m59s'],
    [3599.6, '1h00m'],
    [3725, '1h02m'],
    [7140, '1h59m'],
    [7199.9, '2h00m'],
  ])('%f → %s', (s, text) => expect(formatSeconds(s)).toBe(text));
});
