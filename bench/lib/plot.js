import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, haveCommand } from './sh.js';

/**
 * @typedef {object} Series
 * @property {string} title
 * @property {Array<[number, number]>} points x, y
 */

/**
 * gnuplot script drawing `series` as lines with points into a PNG. Pure, so it is unit-tested.
 *
 * @param {string} png output path
 * @param {{ title: string, xlabel: string, ylabel: string, series: Series[] }} chart
 * @returns {string}
 */
export function gnuplotScript(png, chart) {
  const q = (/** @type {string} */ s) => `"${s.replace(/["\\]/g, '')}"`;
  const plots = chart.series.map((s) => `'-' using 1:2 with linespoints title ${q(s.title)}`);
  const data = chart.series.map((s) => `${s.points.map(([x, y]) => `${x} ${y}`).join('\n')}\ne`);
  return [
    'set terminal pngcairo size 800,500',
    `set output ${q(png)}`,
    `set title ${q(chart.title)}`,
    `set xlabel ${q(chart.xlabel)}`,
    `set ylabel ${q(chart.ylabel)}`,
    'set key left top',
    'set grid',
    'set yrange [0:*]',
    `plot ${plots.join(', ')}`,
    ...data,
    '',
  ].join('\n');
}

/**
 * Draw a PNG with gnuplot when it is installed (optional: `apt-get install gnuplot-nox`);
 * returns the path, or null when gnuplot is missing.
 *
 * @param {string} png
 * @param {{ title: string, xlabel: string, ylabel: string, series: Series[] }} chart
 * @returns {Promise<string | null>}
 */
export async function plotPng(png, chart) {
  if (!haveCommand('gnuplot')) return null;
  const dir = await mkdtemp(join(tmpdir(), 'fl-plot-'));
  try {
    await writeFile(join(dir, 'plot.gp'), gnuplotScript(png, chart));
    await run('gnuplot', [join(dir, 'plot.gp')]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return png;
}
