import { describe, expect, it } from 'vitest';
import type { DonorLifetimes } from '../repositories/donor-lifetimes.js';
import { replicaCount } from './replica-count.js';

const HOUR = 3600;
const YEAR = 365 * 24 * HOUR;
const fresh: DonorLifetimes = { donors: 3, enrolledSeconds: 3 * HOUR, departures: 0, usedBytes: 0 };
const flaky: DonorLifetimes = {
  donors: 10,
  enrolledSeconds: 100 * HOUR,
  departures: 100,
  usedBytes: 10e9,
};
const steady: DonorLifetimes = {
  donors: 50,
  enrolledSeconds: 200 * YEAR,
  departures: 4,
  usedBytes: 50e12,
};

describe('replicaCount', () => {
  it.each([
    ['as requested', { replicas: 3 }, fresh, 3, null, /3 copies as requested/],
    ['one copy as requested', { replicas: 1 }, fresh, 1, null, /1 copy as requested/],
    ['the manager default', {}, fresh, 2, null, /REPLICAS_DEFAULT=2/],
    [
      'a target with the model defaults',
      { availability: 0.99 },
      fresh,
      2,
      0.99,
      /MTTF 365 days \(model default\)/,
    ],
    [
      'a higher target needs more copies',
      { availability: 0.999999 },
      fresh,
      4,
      0.999999,
      /4 copies give/,
    ],
    [
      'measured departures set the MTTF',
      { availability: 0.999 },
      steady,
      2,
      0.999,
      /MTTF 18250 days \(measured: 4 departures\), 1000\.0 GB per donor/,
    ],
  ])('%s', (_name, req, lives, n, target, reason) => {
    const got = replicaCount(req, 2, lives);
    expect(got.replicas).toBe(n);
    expect(got.availabilityTarget).toBe(target);
    expect(got.reason).toMatch(reason);
  });

  it('refuses a target copies cannot reach when donors fail faster than repair', () => {
    // MTTF of an hour against 2 Mbps of repair: availability stays near 0.72, whatever n.
    expect(() => replicaCount({ availability: 0.999 }, 2, flaky)).toThrow(
      /out of reach: 16 copies give 0\.7\d+ with donor MTTF 1\.0 hours \(measured: 100 departures\).*repair bandwidth, not copies/,
    );
  });

  it('refuses replicas together with availability', () => {
    expect(() => replicaCount({ replicas: 2, availability: 0.9 }, 2, fresh)).toThrow(
      /either replicas .* or availability .* not both/,
    );
  });
});
