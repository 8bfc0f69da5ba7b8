import { describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { modelPrefixBytes, prefixBytes, prefixRatio } from './prefix-model.js';

const MB = 1e6;

describe('prefix model (seed 002 Table 2: S = 2500 MB, R_client = 52.2 MB/s)', () => {
  it.each([
    ['HPSS-ORNL', 7.6, 31.4, 95.0],
    ['TeraGrid-ORNL', 42.0, 3.0, 24.6],
    ['TeraGrid-PSC', 10.8, 3.9, 81.0],
  ])('%s: R_patch %f MB/s, L %f s → %f %%', (_name, rPatch, latency, percent) => {
    const input = {
      sizeBytes: 2500 * MB,
      clientRate: 52.2 * MB,
      patchRate: rPatch * MB,
      startupLatencyS: latency,
    };
    expect(Math.round(prefixRatio(input) * 1000) / 10).toBe(percent);
    // Whole 1 MiB morsels add at most one morsel to the model's answer.
    const whole = prefixBytes(input, MiB);
    expect(whole % MiB === 0 || whole === input.sizeBytes).toBe(true);
    expect(whole - modelPrefixBytes(input)).toBeGreaterThanOrEqual(0);
    expect(whole - modelPrefixBytes(input)).toBeLessThan(MiB);
  });
});

describe('clamping', () => {
  it.each([
    // A patch at least as fast as the client needs only to cover L at the client's rate.
    ['fast source', { sizeBytes: 100 * MiB, clientRate: 10, patchRate: 10, startupLatencyS: 0 }, 0],
    [
      'fast source with latency',
      { sizeBytes: 100 * MiB, clientRate: 10 * MiB, patchRate: 20 * MiB, startupLatencyS: 1 },
      10 * MiB,
    ],
    // Latency longer than the whole read: everything must be cached.
    [
      'huge latency',
      { sizeBytes: 10 * MiB, clientRate: 10 * MiB, patchRate: 5 * MiB, startupLatencyS: 100 },
      10 * MiB,
    ],
    [
      'unknown patch rate',
      { sizeBytes: 10 * MiB, clientRate: 1, patchRate: 0, startupLatencyS: 0 },
      10 * MiB,
    ],
    ['empty dataset', { sizeBytes: 0, clientRate: 1, patchRate: 1, startupLatencyS: 1 }, 0],
    [
      'half the rate, no latency',
      { sizeBytes: 10 * MiB, clientRate: 100, patchRate: 50, startupLatencyS: 0 },
      5 * MiB,
    ],
    // Rounded up to whole morsels, but never past S.
    [
      'short last morsel',
      { sizeBytes: 10 * MiB + 7, clientRate: 1e12, patchRate: 1, startupLatencyS: 0 },
      10 * MiB + 7,
    ],
  ])('%s', (_name, input, expected) => {
    expect(prefixBytes(input, MiB)).toBe(expected);
    expect(modelPrefixBytes(input)).toBeGreaterThanOrEqual(0);
    expect(modelPrefixBytes(input)).toBeLessThanOrEqual(input.sizeBytes);
  });

  it('refuses a zero morsel size', () => {
    expect(() =>
      prefixBytes({ sizeBytes: 1, clientRate: 1, patchRate: 1, startupLatencyS: 0 }, 0),
    ).toThrow(RangeError);
  });
});
