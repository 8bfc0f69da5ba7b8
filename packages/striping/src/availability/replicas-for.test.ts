import { describe, expect, it } from 'vitest';
import { chainRates } from './rates.js';
import { replicasFor } from './replicas-for.js';
import { unavailability } from './unavailability.js';

describe('replicasFor', () => {
  const rates = { lambda: 10, lambda0: 1, mu: 1 }; // ρ = 10, γ = 1
  it.each([
    [0.4, 1],
    [0.5, 1], // n = 1 gives exactly 1/(1+γ) = 0.5
    [0.85, 2],
    [0.95, 3],
    [0.99, 5],
    [0.999, 9],
    [0.9996, null], // above the n → ∞ limit 0.999546
  ])('target %f → n = %s', (target, n) => {
    expect(replicasFor(target, rates)).toBe(n);
  });

  it('returns the smallest n that reaches the target', () => {
    const ratios = { rho: 164, gamma: 82 }; // seed 003 defaults, b = 2 Mbps, B = 1 Mbps
    for (const target of [0.9, 0.99, 0.999, 0.9999, 0.99999, 0.999999]) {
      const n = replicasFor(target, { lambda: ratios.rho, lambda0: ratios.gamma, mu: 1 });
      expect(n).not.toBeNull();
      const got = n ?? 0;
      expect(1 - unavailability(got, ratios)).toBeGreaterThanOrEqual(target);
      if (got > 1) expect(1 - unavailability(got - 1, ratios)).toBeLessThan(target);
    }
  });

  it.each([
    // seed 003 defaults: 32 TB × 3 on 1,000 donors, b = 2 Mbps, B = 1 Mbps, MTTF 1 year
    [0.99999, false, 3],
    [0.999999, false, 4],
    [0.9999999, true, 2],
    [0.99999999, true, 3],
  ])('paper setting: target %f, parallel %s → n = %i', (target, parallel, n) => {
    const rates = chainRates({
      objectBytes: 1e9,
      bytesPerDonor: 96e9,
      donorRepairBytesPerS: 250_000,
      sourceRepairBytesPerS: 125_000,
      donorMttfS: 365 * 86400,
      parallel,
    });
    expect(replicasFor(target, rates)).toBe(n);
  });

  it('honours the cap and rejects targets outside (0, 1)', () => {
    expect(replicasFor(0.99, rates, 4)).toBeNull();
    expect(() => replicasFor(1, rates)).toThrow(RangeError);
    expect(() => replicasFor(0, rates)).toThrow(RangeError);
  });
});
