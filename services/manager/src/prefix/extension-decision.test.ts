import { describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { decideExtension, EXTEND_MIN_READS, type ExtensionInput } from './extension-decision.js';

// A 20 MiB dataset with a 6 MiB prefix in a 48 MiB cache (high watermark 90 %: 43.2 MiB).
const base: ExtensionInput = {
  sizeBytes: 20 * MiB,
  cachedBytes: 6 * MiB,
  morselSize: MiB,
  readScore: 2.9,
  pinned: false,
  hasSource: true,
  busy: false,
  capacityBytes: 48 * MiB,
  usedBytes: 6 * MiB,
  highWatermark: 0.9,
};

describe('decideExtension', () => {
  it.each<[string, Partial<ExtensionInput>, { to: number } | RegExp]>([
    ['three recent reads, room for all of it', {}, { to: 20 * MiB }],
    ['three reads spread over days', { readScore: 1.75 }, /read 1\.75 times/],
    ['two reads', { readScore: 2 }, /read 2\.00 times/],
    ['never read', { readScore: 0 }, /read 0\.00 times/],
    ['many reads', { readScore: 40 }, { to: 20 * MiB }],
    // 43.2 − 40 = 3.2 MiB under the watermark: three whole morsels.
    ['room for three morsels only', { usedBytes: 40 * MiB }, { to: 9 * MiB }],
    ['room for less than a morsel', { usedBytes: 42.5 * MiB }, /no free space/],
    ['cache already above the high watermark', { usedBytes: 45 * MiB }, /no free space/],
    ['no donated space at all', { capacityBytes: 0, usedBytes: 0 }, /no free space/],
    ['prefix already the whole dataset', { cachedBytes: 20 * MiB }, /cached whole/],
    [
      'short last morsel, all cached',
      { sizeBytes: 20 * MiB + 7, cachedBytes: 20 * MiB + 7 },
      /cached whole/,
    ],
    ['short last morsel, room for it', { sizeBytes: 20 * MiB + 7 }, { to: 20 * MiB + 7 }],
    ['no cached part yet (evicted)', { cachedBytes: 0 }, { to: 20 * MiB }],
    ['pinned', { pinned: true }, /pinned/],
    ['no source', { hasSource: false }, /no Range-capable source/],
    ['another job under way', { busy: true }, /under way/],
  ])('%s', (_name, change, expected) => {
    const d = decideExtension({ ...base, ...change });
    if (expected instanceof RegExp) {
      expect(d.extend).toBe(false);
      expect(d.extend ? '' : d.reason).toMatch(expected);
    } else {
      const from =
        (change.cachedBytes ?? base.cachedBytes) - ((change.cachedBytes ?? base.cachedBytes) % MiB);
      expect(d).toEqual({ extend: true, fromBytes: from, toBytes: expected.to });
    }
  });

  it('the third read in a short while qualifies, the second does not', () => {
    // Decayed counts: reads one hour apart with a one-day half-life.
    const hour = 0.5 ** (1 / 24);
    const scores = [1, 1 * hour + 1, (1 * hour + 1) * hour + 1];
    const extend = scores.map((readScore) => decideExtension({ ...base, readScore }).extend);
    expect(extend).toEqual([false, false, true]);
    expect(EXTEND_MIN_READS).toBe(3);
  });
});
