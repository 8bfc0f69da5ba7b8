import { describe, expect, it } from 'vitest';
import { chainRates, perYear, repairRatios } from './rates.js';

const YEAR = 365 * 24 * 3600;
const Mbps = 1e6 / 8;

describe('chainRates (seed 003 §4.3.1 estimate)', () => {
  it('λ = 2b/d, λ0 = 2B/d, μ = 1/MTTF for the paper setting', () => {
    // 32 TB × 3 over 1,000 donors, b = 1 Mbps, B = 1 Mbps, MTTF 1 year.
    const r = chainRates({
      objectBytes: 1e9,
      bytesPerDonor: 96e9,
      donorRepairBytesPerS: 1 * Mbps,
      sourceRepairBytesPerS: 1 * Mbps,
      donorMttfS: YEAR,
    });
    expect(r.lambda * YEAR).toBeCloseTo(82.1, 1); // the paper: "≈ 78 replica copies per year"
    expect(r.lambda0).toBe(r.lambda);
    expect(r.mu * YEAR).toBeCloseTo(1, 12);
    const { rho, gamma } = repairRatios(r);
    expect(rho).toBeCloseTo(82.1, 1);
    expect(gamma).toBeCloseTo(82.1, 1);
  });

  it.each([
    // bytesPerDonor, object, b → λ (per second)
    [100e9, 1e9, 1e6, 1e6 / 50e9], // d/2 dominates
    [1e9, 1e9, 1e6, 1e6 / 1e9], // one object per donor: a whole transfer
    [0, 64e6, 64e6, 1], // an empty donor still needs the object's own transfer time
  ])('d=%f object=%f b=%f → λ=%f', (bytesPerDonor, objectBytes, b, lambda) => {
    const r = chainRates({
      objectBytes,
      bytesPerDonor,
      donorRepairBytesPerS: b,
      sourceRepairBytesPerS: b / 2,
      donorMttfS: YEAR,
    });
    expect(r.lambda).toBeCloseTo(lambda, 15);
    expect(r.lambda0).toBeCloseTo(lambda / 2, 15);
  });

  it('parallel repair waits one object; the source is capped by the receiving donor', () => {
    const r = chainRates({
      objectBytes: 1e9,
      bytesPerDonor: 96e9,
      donorRepairBytesPerS: 2 * Mbps,
      sourceRepairBytesPerS: 8 * Mbps,
      donorMttfS: YEAR,
      parallel: true,
    });
    expect(r.lambda).toBeCloseTo(250_000 / 1e9, 15);
    expect(r.lambda0).toBe(r.lambda); // B = 8 Mbps lands at b = 2 Mbps
  });

  it('rejects nonsense', () => {
    expect(() => repairRatios({ lambda: 1, lambda0: 1, mu: 0 })).toThrow(RangeError);
    expect(() =>
      chainRates({
        objectBytes: 1,
        bytesPerDonor: 1,
        donorRepairBytesPerS: 1,
        sourceRepairBytesPerS: 1,
        donorMttfS: 0,
      }),
    ).toThrow(RangeError);
    expect(perYear(YEAR)).toBe(1);
  });
});
