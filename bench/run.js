#!/usr/bin/env node
// Runs the emulated-LAN benchmarks: `node bench/run.js [--quick] [--keep] [name...]` (as root).
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createContext } from './lib/context.js';
import { ensurePrerequisites } from './lib/prereqs.js';

const here = dirname(fileURLToPath(import.meta.url));
/** Calibration first, then baselines, then FreeLoader; others after, by file name. */
const ORDER = [
  'link-goodput',
  'loopback-nginx',
  'baselines-stripe',
  'stripe-width',
  'mount-lan',
  'degraded-read',
];

/**
 * @param {string[]} argv
 * @returns {{ quick: boolean, keep: boolean, names: string[] }}
 */
export function parseArgs(argv) {
  const flags = argv.filter((a) => a.startsWith('--'));
  const unknown = flags.filter((f) => !['--quick', '--keep'].includes(f));
  if (unknown.length) throw new Error(`unknown option ${unknown[0]} (use --quick, --keep, names)`);
  return {
    quick: flags.includes('--quick'),
    keep: flags.includes('--keep'),
    names: argv.filter((a) => !a.startsWith('--')),
  };
}

/**
 * @returns {Promise<Array<{ name: string, run: (ctx: import('./lib/context.js').BenchContext) => Promise<number> }>>}
 */
async function loadBenchmarks() {
  const dir = join(here, 'benchmarks');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.js') && !f.endsWith('.test.js'))
    .sort();
  const loaded = await Promise.all(
    files.map(async (f) => (await import(pathToFileURL(join(dir, f)).href)).default),
  );
  const rank = (/** @type {{ name: string }} */ b) => ORDER.indexOf(b.name) + 1 || ORDER.length + 1;
  return loaded.sort((a, b) => rank(a) - rank(b));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const all = await loadBenchmarks();
  const unknown = args.names.filter((n) => !all.some((b) => b.name === n));
  if (unknown.length) {
    throw new Error(
      `no benchmark ${unknown.join(', ')}; have ${all.map((b) => b.name).join(', ')}`,
    );
  }
  const chosen = args.names.length ? all.filter((b) => args.names.includes(b.name)) : all;
  const log = (/** @type {string} */ m) => console.error(`[bench] ${m}`);
  await ensurePrerequisites(log);
  const ctx = createContext({
    quick: args.quick,
    keep: args.keep,
    resultsDir: join(here, 'results'),
  });
  /** @type {string[]} */
  const failed = [];
  try {
    for (const bench of chosen) {
      ctx.log(`── ${bench.name}${args.quick ? ' (quick)' : ''}`);
      try {
        const bad = await bench.run(ctx);
        if (bad > 0) failed.push(`${bench.name} (${bad} row(s) below target)`);
      } catch (e) {
        console.error(`[bench] ${bench.name} failed: ${e instanceof Error ? e.message : e}`);
        failed.push(bench.name);
      }
    }
  } finally {
    ctx.close(failed.length > 0);
  }
  if (failed.length) {
    console.error(`[bench] failed: ${failed.join('; ')}`);
    process.exitCode = 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((e) => {
    console.error(`[bench] ${e instanceof Error ? e.message : e}`);
    process.exitCode = 1;
  });
}
