import { describe, expect, it } from 'vitest';
import { markdownTable, score } from './report.js';

describe('score', () => {
  it.each([
    ['above target', { mbps: 11.9, limitMbps: 12.5, targetRatio: 0.93 }, 0.952, true],
    ['below target', { mbps: 10, limitMbps: 12.5, targetRatio: 0.93 }, 0.8, false],
    ['no target', { mbps: 10, limitMbps: 12.5 }, 0.8, null],
    ['no limit', { mbps: 10, limitMbps: null, targetRatio: 0.9 }, null, null],
  ])('%s', (_name, row, ratio, pass) => {
    const s = score({ case: 'x', ...row });
    if (ratio === null) expect(s.ratio).toBeNull();
    else expect(s.ratio).toBeCloseTo(ratio, 3);
    expect(s.pass).toBe(pass);
  });
});

describe('markdownTable', () => {
  it('aligns columns and marks verdicts', () => {
    const table = markdownTable([
      score({ case: 'a', mbps: 11.94, limitMbps: 12.5, targetRatio: 0.93 }),
      score({ case: 'longer case', mbps: 1, limitMbps: null, note: 'n' }),
    ]);
    const lines = table.split('\n');
    expect(lines).toHaveLength(4);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
    expect(lines[2]).toContain('| 11.9 ');
    expect(lines[2]).toContain('PASS');
    expect(lines[3]).toContain('info');
  });
});

describe('score of a cost', () => {
  it.each([
    [120, 150, true],
    [150, 150, true],
    [151, 150, false],
  ])('%f MB against a %f MB limit → pass %s', (mbps, limit, pass) => {
    expect(
      score({ case: 'rss', mbps, limitMbps: limit, targetRatio: 1, lowerIsBetter: true }).pass,
    ).toBe(pass);
  });
});
