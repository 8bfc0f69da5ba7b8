import { describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { patchRequestSize } from './patch-sessions.js';

describe('patchRequestSize', () => {
  it.each([
    ['the source’s size when the suffix is long', 64 * MiB, 10_000 * MiB, 8, 64 * MiB],
    ['never above 256 MiB (a node buffers it)', 1024 * MiB, 10_000 * MiB, 4, 256 * MiB],
    ['small enough that every node gets one', 64 * MiB, 14 * MiB, 3, 5 * MiB],
    ['whole morsels', 64 * MiB, 10 * MiB + 1, 4, 3 * MiB],
    ['at least a morsel', 64 * MiB, 100, 8, MiB],
    ['no nodes: one request', 64 * MiB, 3 * MiB, 0, 3 * MiB],
  ])('%s', (_name, preferred, suffix, width, expected) => {
    expect(patchRequestSize(preferred, suffix, width, MiB)).toBe(expected);
  });
});
