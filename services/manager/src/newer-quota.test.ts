import { describe, expect, it } from 'vitest';
import type { Heartbeat } from '@freeloader/protocol';
import { newerQuota } from './newer-quota.js';

const hb: Heartbeat = { quotaBytes: 10, usedBytes: 1, freeBytes: 9, servingRate: 0 };
const v = (quotaBytes: number, quotaVersion?: number): Heartbeat => ({
  ...hb,
  quotaBytes,
  ...(quotaVersion === undefined ? {} : { quotaVersion }),
});

describe('newerQuota', () => {
  it.each([
    ['first heartbeat', undefined, v(5, 1), v(5, 1)],
    ['newer version wins', v(5, 1), v(7, 2), v(7, 2)],
    ['same version: taken as sent', v(5, 2), v(6, 2), v(6, 2)],
    ['older version keeps the known quota', v(20, 2), v(0, 1), v(20, 2)],
    ['old agent (no version) taken as sent', v(20, 2), v(0), v(0)],
    ['versioned after unversioned', v(20), v(3, 1), v(3, 1)],
  ] as const)('%s', (_name, before, next, want) => {
    expect(newerQuota(before, next)).toEqual(want);
  });

  it('keeps the late heartbeat’s other numbers', () => {
    const late = { ...v(0, 1), usedBytes: 4, servingRate: 99 };
    expect(newerQuota(v(20, 2), late)).toEqual({ ...late, quotaBytes: 20, quotaVersion: 2 });
  });
});
