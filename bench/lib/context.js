import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, version } from 'node:os';
import { machineBuild, pageReporting } from './machine.js';
import { join } from 'node:path';
import { onCleanup } from './cleanup-hooks.js';
import { makeDataset } from './dataset.js';
import { writeReport } from './report.js';

/**
 * What every benchmark's `run(ctx)` receives.
 *
 * @typedef {object} BenchContext
 * @property {boolean} quick smaller sizes and fewer cases (`--quick`)
 * @property {string} tmpDir this run's scratch directory (mode 0755: nginx workers read from it)
 * @property {string} resultsDir bench/results
 * @property {(msg: string) => void} log
 * @property {(name: string) => string} workDir a fresh subdirectory of tmpDir
 * @property {(bytes: number) => Promise<import('./dataset.js').Dataset & { dir: string }>} dataset
 *   a deterministic file of that size, made once per run and shared by benchmarks
 * @property {(name: string, params: Record<string, unknown>, rows: import('./report.js').Row[], meta?: Record<string, unknown>) => Promise<number>} report
 *   write results and print the table; returns the number of failed rows
 */

/**
 * @param {{ quick: boolean, resultsDir: string, keep: boolean }} opts
 * @returns {BenchContext & { close: (failed: boolean) => void }}
 */
export function createContext(opts) {
  const tmpDir = mkdtempSync(join(tmpdir(), 'fl-bench-'));
  chmodSync(tmpDir, 0o755);
  // Lets bench/cleanup.js tell a live run's scratch directory from a crashed one's.
  writeFileSync(join(tmpDir, 'owner.json'), JSON.stringify({ pid: process.pid }));
  const datasetDir = join(tmpDir, 'datasets');
  mkdirSync(datasetDir, { mode: 0o755 });
  /** @type {Map<number, Promise<import('./dataset.js').Dataset & { dir: string }>>} */
  const datasets = new Map();
  const log = (/** @type {string} */ msg) => console.error(`[bench] ${msg}`);
  const close = (/** @type {boolean} */ failed) => {
    rmSync(datasetDir, { recursive: true, force: true });
    const hasLogs = readdirSync(tmpDir).some((f) => f !== 'owner.json');
    if (opts.keep || (failed && hasLogs)) log(`logs kept in ${tmpDir}`);
    else rmSync(tmpDir, { recursive: true, force: true });
    forget();
  };
  // Datasets reach 1 GiB: never leave them behind, whatever ends the run.
  const forget = onCleanup(() => rmSync(datasetDir, { recursive: true, force: true }));
  return {
    quick: opts.quick,
    tmpDir,
    resultsDir: opts.resultsDir,
    log,
    workDir: (name) => {
      const n = readdirSync(tmpDir).filter((d) => d.startsWith(name)).length;
      const dir = join(tmpDir, n ? `${name}-${n}` : name);
      mkdirSync(dir, { mode: 0o755 });
      return dir;
    },
    dataset: (bytes) => {
      let ds = datasets.get(bytes);
      if (!ds) {
        log(`generating a ${bytes / 2 ** 20} MiB dataset`);
        ds = makeDataset(datasetDir, bytes).then((d) => ({ ...d, dir: datasetDir }));
        datasets.set(bytes, ds);
      }
      return ds;
    },
    report: async (name, params, rows, meta = {}) => {
      // Kernel build and CPU model: the same benchmark differs by 3× between VMs of one kind.
      const machine = {
        kernel: release(),
        kernelBuild: version(),
        cpuModel: cpus()[0]?.model ?? 'unknown',
        cpus: cpus().length,
        loadavg1: Number((loadavg()[0] ?? 0).toFixed(2)),
        ...(pageReporting() ? { pageReporting: pageReporting() } : {}),
        ...machineBuild(),
      };
      const out = await writeReport(opts.resultsDir, name, {
        params,
        rows,
        meta: { quick: opts.quick, ...machine, ...meta },
      });
      console.log(`\n${name}${opts.quick ? ' (quick)' : ''}\n${out.table}\n`);
      return out.failed;
    },
    close,
  };
}
