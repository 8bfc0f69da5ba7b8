import { describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { prefixFromStats } from './prefix-sizing.js';

describe('prefixFromStats', () => {
  it.each([
    ['unknown source: whole', null, 100 * MiB],
    ['no rate yet: whole', { startupLatencyS: 1, patchRate: null, importRate: null }, 100 * MiB],
    ['patch rate known', { startupLatencyS: 0, patchRate: 50e6, importRate: 1 }, 50 * MiB],
    ['import rate as a floor', { startupLatencyS: 0, patchRate: null, importRate: 25e6 }, 75 * MiB],
    ['latency adds L·R_patch', { startupLatencyS: 1, patchRate: 50e6, importRate: null }, 98 * MiB],
  ])('%s', (_name, stats, expected) => {
    // R_client 100e6 bytes/s over a 100 MiB dataset.
    expect(prefixFromStats(100 * MiB, MiB, stats, 100e6)).toBe(expected);
  });
});
