import { describe, expect, it } from 'vitest';
import { uptimeByDonor, uptimeFraction } from './uptime';

describe('uptimeFraction', () => {
  it('weights downsampled buckets by the time they cover', () => {
    // A 10-minute bucket up 50 % of the time and 20 raw 30 s samples all up: 15 of 20 minutes.
    const raw = Array.from({ length: 20 }, () => ({ value: 1, resolutionS: 0 }));
    expect(uptimeFraction([{ value: 0.5, resolutionS: 600 }, ...raw], 30)).toBe(0.75);
  });
  it('is null without samples', () => {
    expect(uptimeFraction([], 30)).toBeNull();
  });
});

describe('uptimeByDonor', () => {
  it('maps each donor to its uptime', () => {
    const m = uptimeByDonor({
      series: 'donor_up',
      sampleIntervalS: 30,
      subjects: [
        {
          subject: 'a',
          points: [
            { at: '2025-01-01T00:00:00Z', value: 1, resolutionS: 0 },
            { at: '2025-01-01T00:00:30Z', value: 0, resolutionS: 0 },
          ],
        },
      ],
    });
    expect(m.get('a')).toBe(0.5);
  });
});
