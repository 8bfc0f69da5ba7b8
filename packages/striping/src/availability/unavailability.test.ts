import { describe, expect, it } from 'vitest';
import { chainUnavailability, unavailability } from './unavailability.js';

describe('unavailability p0 (seed 003 §4.1)', () => {
  it.each([
    // n, ρ, γ, p0 worked by hand
    [1, 100, 9, 1 / 10], // n = 1: 1/(1+γ), ρ plays no part
    [1, 0, 1, 1 / 2],
    [2, 10, 1, 1 / (1 + 1 + 5)],
    [3, 10, 1, 1 / (1 + 1 + 5 + 100 / 6)],
    [3, 0, 4, 1 / 5], // no donor repair: only the source's seeding counts
    [4, 2, 0.5, 1 / (1 + 0.5 * (1 + 1 + 4 / 6 + 8 / 24))],
  ])('n=%i ρ=%f γ=%f → %f', (n, rho, gamma, p0) => {
    expect(unavailability(n, { rho, gamma })).toBeCloseTo(p0, 12);
  });

  it('agrees with the general birth-death chain', () => {
    for (const [n, lambda, lambda0, mu] of [
      [1, 5, 2, 1],
      [3, 164, 82, 1],
      [6, 0.3, 7, 0.5],
    ] as const) {
      const up = [lambda0, ...Array<number>(n - 1).fill(lambda)];
      const down = Array.from({ length: n }, (_, k) => (k + 1) * mu);
      expect(unavailability(n, { rho: lambda / mu, gamma: lambda0 / mu })).toBeCloseTo(
        chainUnavailability(up, down),
        12,
      );
    }
  });

  it('limits: γ → 0 and μ → ∞ make the object unavailable, fast repair makes it available', () => {
    expect(unavailability(3, { rho: 50, gamma: 0 })).toBe(1);
    // μ → ∞ sends ρ and γ to 0 together.
    expect(unavailability(3, { rho: 1e-9, gamma: 1e-9 })).toBeCloseTo(1, 8);
    // λ → ∞ with n ≥ 2: p0 ≈ n!/(γρ^(n-1)) → 0.
    expect(unavailability(2, { rho: 1e9, gamma: 1 })).toBeCloseTo(2e-9, 12);
    // Decreasing returns: each extra replica helps less, and never hurts.
    const p = [1, 2, 3, 4, 5, 6].map((n) => unavailability(n, { rho: 3, gamma: 1 }));
    for (let i = 1; i < p.length; i++) expect(p[i]).toBeLessThanOrEqual(p[i - 1] ?? 1);
    expect((p[4] ?? 0) - (p[5] ?? 0)).toBeLessThan((p[0] ?? 0) - (p[1] ?? 0));
  });

  it('tends to 1/(1 + γ(e^ρ - 1)/ρ) as n grows, without overflow', () => {
    const rho = 30;
    expect(unavailability(200, { rho, gamma: 2 })).toBeCloseTo(
      1 / (1 + (2 * (Math.exp(rho) - 1)) / rho),
      20,
    );
  });

  it.each([0, 1.5, -1])('rejects replication level %f', (n) => {
    expect(() => unavailability(n, { rho: 1, gamma: 1 })).toThrow(RangeError);
  });
});
