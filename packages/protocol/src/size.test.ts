import { describe, expect, it } from 'vitest';
import { formatSize, parseSize } from './size.js';

describe('parseSize', () => {
  it.each([
    ['0', 0],
    ['512', 512],
    ['20GiB', 20 * 2 ** 30],
    ['1.5 MB', 1_500_000],
    ['1 TiB', 2 ** 40],
    ['3k', 3000],
    ['64KiB', 65536],
  ])('%s → %i', (text, bytes) => expect(parseSize(text)).toBe(bytes));

  it.each(['', 'abc', '-1GB', '10 XB', '1e9', '9999999999 TiB'])('rejects %j', (text) => {
    expect(() => parseSize(text)).toThrow(/size/);
  });
});

describe('formatSize', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1536, '1.5 KiB'],
    [2 ** 30, '1 GiB'],
    [5 * 2 ** 40, '5 TiB'],
  ])('%i → %s', (bytes, text) => expect(formatSize(bytes)).toBe(text));
});
