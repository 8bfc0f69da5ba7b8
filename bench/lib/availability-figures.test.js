import { describe, expect, it } from 'vitest';
import { modelFor, runFigures } from './availability-figures.js';
import { figureChart, figureMarkdown, nines } from './availability-report.js';
import { PAPER_DEFAULTS } from './availability-sim.js';

describe('availability figures (--quick)', () => {
  const figures = runFigures({ quick: true });

  it('produces every figure, with the model where it applies', () => {
    expect(figures.map((f) => f.id)).toEqual([
      'fig3-model',
      'fig4',
      'fig8',
      'fig10',
      'fig12',
      'fig14',
    ]);
    for (const f of figures) expect(f.points.length).toBeGreaterThanOrEqual(2);
    const byId = Object.fromEntries(figures.map((f) => [f.id, f]));
    expect(Object.keys(byId['fig3-model']?.points[0]?.model ?? {})).toContain('permanentParallel');
    expect(byId['fig4']?.points.every((p) => Object.keys(p.model).length === 0)).toBe(true);
    // Seed Fig. 14's headline survives even the tiny run: most free space is the worst scheme.
    const mean = (/** @type {string} */ s) =>
      Number(byId['fig14']?.points.find((p) => p.series === s)?.sim.mean);
    expect(mean('most-space')).toBeGreaterThan(mean('least-transfers'));
    // Seed Fig. 12: one more replica, better availability.
    const [n2, n3] = byId['fig12']?.points ?? [];
    expect(Number(n3?.sim.mean)).toBeLessThan(Number(n2?.sim.mean));
  });

  it('renders a table row per run and a chart series per line', () => {
    for (const f of figures) {
      const md = figureMarkdown(f, 'now');
      expect(md.split('\n').filter((l) => l.startsWith('| ')).length).toBe(f.points.length + 1);
      const chart = figureChart(f);
      for (const s of chart.series) expect(s.points.length).toBeGreaterThan(0);
    }
  });
});

describe('modelFor and nines', () => {
  it('permanent-only equals all-detected when there are no transient failures', () => {
    const m = modelFor({ ...PAPER_DEFAULTS, transient: null });
    expect(m['detectedParallel']).toBe(m['permanentParallel']);
    expect(m['permanentPaper']).toBeGreaterThan(m['permanentParallel'] ?? 1);
    expect(modelFor({ ...PAPER_DEFAULTS, BMbps: 0 })).toEqual({});
  });

  it.each([
    [1e-3, 3],
    [1, 0],
    [0, null],
  ])('nines(%f) = %s', (u, want) => {
    const got = nines(u);
    if (want === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(want, 12);
  });
});
