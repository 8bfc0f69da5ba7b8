import { describe, expect, it } from 'vitest';
import type { Heartbeat } from '@freeloader/protocol';
import { heartbeatChanged } from './heartbeat-change.js';

const hb: Heartbeat = {
  quotaBytes: 100,
  usedBytes: 10,
  freeBytes: 90,
  servingRate: 0,
  cpuLoad: 0.1,
  throttle: 'idle',
  throttleReasons: ['owner away'],
  url: 'http://10.0.0.1:7400',
  diagnostics: {
    diskReadRate: 1,
    downloadRate: 2,
    uploadRate: 3,
    measuredAt: '2026-11-27T00:00:00.000Z',
  },
};

describe('heartbeatChanged', () => {
  it('ignores cpuLoad and equal copies', () => {
    expect(heartbeatChanged(hb, structuredClone({ ...hb, cpuLoad: 0.9 }))).toBe(false);
    const { cpuLoad: _, ...without } = hb;
    expect(heartbeatChanged(hb, without)).toBe(false);
  });

  it.each<[string, Partial<Heartbeat>]>([
    ['a number', { freeBytes: 89 }],
    ['a string', { url: 'http://10.0.0.2:7400' }],
    ['a list element', { throttleReasons: ['owner active'] }],
    ['a list length', { throttleReasons: [] }],
    ['a nested value', { diagnostics: { ...hb.diagnostics!, uploadRate: 4 } }],
    ['an added field', { diskFull: true }],
    ['running jobs', { runningJobs: ['11111111-1111-4111-8111-111111111111'] }],
  ])('sees %s change', (_what, patch) => {
    expect(heartbeatChanged(hb, { ...hb, ...patch })).toBe(true);
  });

  it('sees a removed field and a first heartbeat', () => {
    const { throttle: _, ...without } = hb;
    expect(heartbeatChanged(hb, without)).toBe(true);
    expect(heartbeatChanged(undefined, hb)).toBe(true);
  });
});
