#!/usr/bin/env node
// `npm run sim:availability`: seed 003 (ThriftStore) — the availability model p0 and the
// simulator, reproducing the shapes of the paper's Figs. 3 (model check), 4, 8, 10, 12 and 14.
// No root, no network; a few minutes on 2 cores. `--quick` runs tiny sizes (seconds) and writes
// nothing unless `--out DIR` is given; `--years N` and `--seed N` change every run; `--replot`
// redraws the tables and PNGs from the last availability-sim.json without simulating again.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { figureMarkdown, figureChart } from './lib/availability-report.js';
import { runFigures } from './lib/availability-figures.js';
import { plotPng } from './lib/plot.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    years: { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
    replot: { type: 'boolean', default: false },
  },
});
const quick = values.quick ?? false;
const out = values.out ?? (quick ? null : join(here, 'results'));
const t0 = Date.now();
/** @type {import('./lib/availability-figures.js').Figure[]} */
let figures;
let date = new Date().toISOString();
if (values.replot) {
  const saved = JSON.parse(
    await readFile(join(out ?? join(here, 'results'), 'availability-sim.json'), 'utf8'),
  );
  figures = saved.figures;
  date = saved.date;
} else {
  figures = runFigures({
    quick,
    ...(values.years ? { years: Number(values.years) } : {}),
    ...(values.seed ? { seed: Number(values.seed) } : {}),
    log: (line) => console.error(line),
  });
}
const mds = figures.map((f) => figureMarkdown(f, date));
console.log(mds.join('\n'));
console.error(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
if (out) {
  await mkdir(out, { recursive: true });
  if (!values.replot) {
    await writeFile(
      join(out, 'availability-sim.json'),
      `${JSON.stringify({ name: 'availability-sim', date, quick, figures }, null, 2)}\n`,
    );
  }
  for (const [i, f] of figures.entries()) {
    await writeFile(join(out, `availability-${f.id}.md`), mds[i] ?? '');
    const png = await plotPng(join(out, `availability-${f.id}.png`), figureChart(f));
    if (png) console.error(`plot: ${png}`);
  }
}
