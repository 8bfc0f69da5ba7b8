import { describe, expect, it } from 'vitest';
import { breakGaps, gapThreshold, seriesRows, tickLabel, timeTicks } from './time-axis';

describe('breakGaps', () => {
  it('leaves a gap longer than the threshold empty and keeps short steps joined', () => {
    const out = breakGaps(
      [
        { at: 5_000, value: 2 },
        { at: 0, value: 1 },
        { at: 605_000, value: 3 },
      ],
      15_000,
    );
    expect(out).toEqual([
      { at: 0, value: 1 },
      { at: 5_000, value: 2 },
      { at: 305_000, value: null },
      { at: 605_000, value: 3 },
    ]);
  });
});

describe('timeTicks', () => {
  it('spaces ticks by time, not by sample count: a 10-minute gap spans many ticks', () => {
    const min = Date.UTC(2025, 0, 1, 10, 0, 0);
    const samples = [min, min + 5_000, min + 10 * 60_000 + 5_000];
    const { step, ticks } = timeTicks(samples[0]!, samples.at(-1)!);
    expect(step).toBe(300_000);
    for (let i = 1; i < ticks.length; i++) expect(ticks[i]! - ticks[i - 1]!).toBe(step);
  });

  it('aligns ticks to round local times', () => {
    const min = new Date(2025, 0, 1, 10, 0, 3).getTime();
    const max = new Date(2025, 0, 1, 10, 9, 58).getTime();
    const { step, ticks } = timeTicks(min, max);
    expect(step).toBe(120_000);
    expect(ticks.map((t) => new Date(t).getMinutes())).toEqual([2, 4, 6, 8]);
    expect(ticks.every((t) => new Date(t).getSeconds() === 0)).toBe(true);
  });

  it('handles a single instant', () => {
    expect(timeTicks(5, 5).ticks).toEqual([5]);
  });
});

describe('tickLabel', () => {
  it('shows seconds only for sub-minute steps', () => {
    const at = new Date(2025, 0, 1, 9, 7, 30).getTime();
    expect(tickLabel(at, 10_000)).toMatch(/09:07:30|9:07:30/);
    expect(tickLabel(at, 300_000)).not.toMatch(/:30/);
  });
});

describe('gapThreshold', () => {
  it('is a few median sampling steps, so one late sample does not break the line', () => {
    const pts = [0, 30_000, 60_000, 95_000, 700_000].map((at) => ({ at, value: 1 }));
    expect(gapThreshold(pts)).toBe(3 * 35_000);
  });
});

describe('seriesRows', () => {
  it('merges series by instant and breaks each one at its own gaps', () => {
    const rows = seriesRows(
      {
        a: [
          { at: 0, value: 1 },
          { at: 100_000, value: 2 },
        ],
        b: [{ at: 0, value: 3 }],
      },
      10_000,
    );
    expect(rows).toEqual([
      { at: 0, a: 1, b: 3 },
      { at: 50_000, a: null },
      { at: 100_000, a: 2 },
    ]);
  });
});
