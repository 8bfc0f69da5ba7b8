/**
 * Markdown tables and chart series for the availability figures. Unavailability is drawn as
 * "nines" (-log10), because `plotPng` draws linear axes from 0 and the paper's values span
 * orders of magnitude; a run with no unavailable second has no point (it is below 1/(objects·T)).
 */

/**
 * @param {number} u unavailability in [0, 1]
 * @returns {number | null}
 */
export function nines(u) {
  return u > 0 ? -Math.log10(u) : null;
}

/** @param {number} x */
const sci = (x) => (x === 0 ? '0' : x.toExponential(2));

const MODEL_LABELS = /** @type {const} */ ([
  ['permanentPaper', 'p0 permanent, paper λ'],
  ['permanentParallel', 'p0 permanent, parallel λ'],
  ['detectedPaper', 'p0 all detected, paper λ'],
  ['detectedParallel', 'p0 all detected, parallel λ'],
]);

/**
 * @param {import('./availability-figures.js').Figure} f
 * @param {string} date
 * @returns {string}
 */
export function figureMarkdown(f, date) {
  const models = MODEL_LABELS.filter(([key]) => f.points.some((p) => key in p.model));
  const head =
    f.metric === 'lost'
      ? ['series', f.xlabel, 'objects lost', 'repair TB', 'peak day TB', 'transfers', 'run s']
      : [
          'series',
          f.xlabel,
          'mean unavail.',
          'nines',
          'p90',
          'p99',
          'max',
          'never unavail.',
          ...models.map(([, label]) => label),
          'repair TB node/source',
          'peak day TB',
          'run s',
        ];
  const rows = f.points.map((p) => {
    const s = p.sim;
    const n = (/** @type {string} */ k) => Number(s[k] ?? 0);
    if (f.metric === 'lost') {
      return [
        p.series,
        p.x,
        `${(n('lostFraction') * 100).toFixed(3)} %`,
        n('nodeTB').toFixed(0),
        n('peakDayTB').toFixed(1),
        n('transfers'),
        n('seconds').toFixed(1),
      ];
    }
    return [
      p.series,
      p.x,
      sci(n('mean')),
      nines(n('mean'))?.toFixed(2) ?? 'none seen',
      sci(n('p90')),
      sci(n('p99')),
      sci(n('max')),
      `${(n('zeroFraction') * 100).toFixed(1)} %`,
      ...models.map(([key]) => (key in p.model ? sci(p.model[key] ?? 0) : '')),
      `${n('nodeTB').toFixed(0)} / ${n('sourceTB').toFixed(1)}`,
      n('peakDayTB').toFixed(1),
      n('seconds').toFixed(1),
    ];
  });
  return [
    `# availability ${f.id}: ${f.title}`,
    '',
    `${f.what}. Generated ${date} by \`npm run sim:availability\`; see docs/availability.md.`,
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    '',
  ].join('\n');
}

/**
 * @param {import('./availability-figures.js').Figure} f
 * @returns {{ title: string, xlabel: string, ylabel: string, series: import('./plot.js').Series[] }}
 */
export function figureChart(f) {
  // Fig. 14 sweeps the scheme itself: one line across the schemes, not a dot per scheme.
  const points = f.id === 'fig14' ? f.points.map((p) => ({ ...p, series: 'placement' })) : f.points;
  const names = [...new Set(points.map((p) => p.series))];
  /** @type {import('./plot.js').Series[]} */
  const series = [];
  /**
   * @param {string} title
   * @param {Array<[number, number | null]>} pts
   */
  const add = (title, pts) => {
    const points = /** @type {Array<[number, number]>} */ (pts.filter(([, y]) => y !== null));
    if (points.length > 0) series.push({ title, points });
  };
  for (const name of names) {
    const pts = points.filter((p) => p.series === name);
    if (f.metric === 'lost') {
      add(
        name,
        pts.map((p) => [p.x, Number(p.sim.lostFraction ?? 0) * 100]),
      );
      continue;
    }
    const label = names.length > 1 ? ` ${name}` : '';
    add(
      `simulator${label}`,
      pts.map((p) => [p.x, nines(Number(p.sim.mean ?? 0))]),
    );
    for (const [key, title] of MODEL_LABELS) {
      if (!pts.some((p) => key in p.model)) continue;
      // Without transient failures the "detected" variants repeat the "permanent" ones; with
      // them, the paper's λ is off the chart (< 2 nines).
      if (f.id === 'fig3-model' ? key.startsWith('detected') : key === 'detectedPaper') continue;
      add(
        `${title}${label}`,
        pts.map((p) => [p.x, nines(Number(p.model[key] ?? 1))]),
      );
    }
  }
  return {
    title: `seed 003 ${f.title}`,
    xlabel: f.xlabel,
    ylabel:
      f.metric === 'lost' ? 'objects lost (%)' : 'availability in nines (-log10 unavailability)',
    series,
  };
}
