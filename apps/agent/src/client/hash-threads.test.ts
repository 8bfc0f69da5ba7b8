import { describe, expect, it } from 'vitest';
import { INLINE_OPEN_MAX_BYTES, hashThreadsFor } from './hash-threads.js';

const mapOf = (sizeBytes: number, sealed: boolean) => ({
  dataset: { sizeBytes },
  ...(sealed ? { dataKey: 'a2V5' } : {}),
});

describe('hashThreadsFor', () => {
  it('opens a small encrypted dataset inline, with no worker to boot', () => {
    expect(hashThreadsFor(mapOf(256 * 2 ** 20, true), 2)).toBe(0);
  });

  it('starts workers for a large encrypted dataset and for any dataset in clear', () => {
    expect(hashThreadsFor(mapOf(INLINE_OPEN_MAX_BYTES, true), 2)).toBe(2);
    expect(hashThreadsFor(mapOf(256 * 2 ** 20, false), 2)).toBe(2);
    expect(hashThreadsFor(mapOf(1, false), 1)).toBe(1);
  });
});
