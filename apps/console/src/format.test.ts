import { describe, expect, it } from 'vitest';
import { formatBytes, formatEta, formatPercent, formatRate } from './format';

describe('format', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1536, '1.50 KiB'],
    [5 * 1048576, '5.00 MiB'],
    [150 * 1073741824, '150 GiB'],
    [-1, '—'],
  ])('formatBytes(%d) = %s', (n, text) => expect(formatBytes(n)).toBe(text));

  it.each([
    [0, '0 MB/s'],
    [52_400_000, '52.4 MB/s'],
    [1_234_000, '1.23 MB/s'],
  ])('formatRate(%d) = %s', (n, text) => expect(formatRate(n)).toBe(text));

  it.each([
    [0, 10, 'done'],
    [100, 0, '—'],
    [42e6, 1e6, '42 s'],
    [600e6, 1e6, '10 min'],
    [3900e6, 1e6, '1 h 5 min'],
  ])('formatEta(%d, %d) = %s', (left, rate, text) => expect(formatEta(left, rate)).toBe(text));

  it.each([
    [0, '0 %'],
    [0.001, '<1 %'],
    [0.999, '99 %'],
    [1, '100 %'],
  ])('formatPercent(%d) = %s', (f, text) => expect(formatPercent(f)).toBe(text));
});
