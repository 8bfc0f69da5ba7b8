import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * One line of a benchmark's results. MB = 10^6 bytes.
 *
 * @typedef {object} Row
 * @property {string} case what was measured, e.g. "aria2c W=4"
 * @property {Record<string, unknown>} [params] knobs of this case (W, bytes, rate…)
 * @property {number} mbps measured MB/s
 * @property {number | null} limitMbps the limit it is compared with (a measured goodput, or a target rate)
 * @property {number | null} [targetRatio] pass when mbps / limitMbps ≥ this; null = informational
 * @property {boolean} [lowerIsBetter] a cost (memory, slowdown): pass when ratio ≤ targetRatio
 * @property {string} [note]
 */

/**
 * @typedef {Row & { ratio: number | null, pass: boolean | null }} ScoredRow
 */

/**
 * Add ratio and pass/fail to a row.
 *
 * @param {Row} row
 * @returns {ScoredRow}
 * @example score({ case: 'x', mbps: 11.9, limitMbps: 12.5, targetRatio: 0.93 }) // ratio 0.952, pass true
 */
export function score(row) {
  const ratio = row.limitMbps ? row.mbps / row.limitMbps : null;
  const target = row.targetRatio ?? null;
  return {
    ...row,
    targetRatio: target,
    ratio,
    pass:
      target === null || ratio === null
        ? null
        : row.lowerIsBetter
          ? ratio <= target
          : ratio >= target,
  };
}

/** @param {number | null | undefined} n @param {number} digits */
const fmt = (n, digits) => (n === null || n === undefined ? '-' : n.toFixed(digits));

/** @param {boolean | null} pass */
const verdict = (pass) => (pass === null ? 'info' : pass ? 'PASS' : 'FAIL');

/**
 * Rows as a markdown table (also readable on a terminal).
 *
 * @param {ScoredRow[]} rows
 * @returns {string}
 */
export function markdownTable(rows) {
  const head = ['case', 'MB/s', 'limit MB/s', 'ratio', 'target', 'result', 'note'];
  const body = rows.map((r) => [
    r.case,
    fmt(r.mbps, 1),
    fmt(r.limitMbps, 1),
    fmt(r.ratio, 3),
    r.targetRatio === null ? '-' : `≥ ${r.targetRatio}`,
    verdict(r.pass),
    r.note ?? '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]?.length ?? 0)));
  const line = (/** @type {string[]} */ cells) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/**
 * Write `<dir>/<name>.json` (replaced: the latest run, machine-readable) and append a dated table
 * to `<dir>/<name>.md` (the history); returns the scored rows.
 *
 * @param {string} dir results directory
 * @param {string} name benchmark name
 * @param {{ params: Record<string, unknown>, rows: Row[], meta: Record<string, unknown> }} data
 * @returns {Promise<{ rows: ScoredRow[], table: string, failed: number }>}
 */
export async function writeReport(dir, name, data) {
  await mkdir(dir, { recursive: true });
  const rows = data.rows.map(score);
  const failed = rows.filter((r) => r.pass === false).length;
  const doc = {
    name,
    date: new Date().toISOString(),
    ...data.meta,
    params: data.params,
    rows,
    failed,
  };
  await writeFile(join(dir, `${name}.json`), `${JSON.stringify(doc, null, 2)}\n`);
  const table = markdownTable(rows);
  const meta = Object.entries(data.meta)
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
    .join(', ');
  const params = JSON.stringify(data.params);
  await appendFile(
    join(dir, `${name}.md`),
    `\n## ${name} — ${doc.date}\n\n${meta}; params ${params}\n\n${table}\n`,
  );
  return { rows, table, failed };
}
