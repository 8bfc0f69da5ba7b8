#!/usr/bin/env node
// `npm run sim:prefix`: seed 002 Fig. 6 — cache hit rate vs cache size at several prefix ratios,
// by replaying a SYNTHETIC trace with the JASMine trace's shape (the real one is not public)
// through the manager's own eviction policy. No root, no network: a few seconds.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { plotPng } from './lib/plot.js';
import { simulatePrefixCache } from './lib/prefix-cache-sim.js';
import { syntheticTrace } from './lib/synthetic-trace.js';

const here = dirname(fileURLToPath(import.meta.url));
const RATIOS = [0.2, 0.4, 0.6, 0.8, 1.0];
/** Cache sizes (TB = 10^12 bytes). */
const CACHES_TB = [0.1, 0.25, 0.5, 1, 2, 4];

const trace = syntheticTrace();
const unique = [...new Set(trace.accesses)].reduce((s, d) => s + (trace.sizes[d] ?? 0), 0);
/** @type {Array<{ ratio: number, cacheTB: number, hitRate: number, trims: number, evictions: number }>} */
const results = [];
for (const ratio of RATIOS) {
  for (const cacheTB of CACHES_TB) {
    const r = simulatePrefixCache(trace, cacheTB * 1e12, ratio);
    results.push({ ratio, cacheTB, hitRate: r.hitRate, trims: r.trims, evictions: r.evictions });
  }
}
const whole = (/** @type {number} */ tb) =>
  results.find((r) => r.ratio === 1 && r.cacheTB === tb)?.hitRate ?? 0;
const lines = [
  `\n## prefix-sim — ${new Date().toISOString()}\n`,
  `SYNTHETIC trace (JASMine shape: ${trace.accesses.length} accesses, ` +
    `${new Set(trace.accesses).size} datasets ≥ 2 GB, ${(unique / 1e12).toFixed(2)} TB distinct; ` +
    `Zipf popularity plus recency). Policy: whole if it fits, else the prefix after ` +
    `seed §4.1 eviction (trim by LRU, then evict by LRU). A hit finds at least the prefix.\n`,
  `| prefix ratio | ${CACHES_TB.map((t) => `${t} TB`).join(' | ')} |`,
  `|---|${CACHES_TB.map(() => '---').join('|')}|`,
  ...RATIOS.map(
    (ratio) =>
      `| ${ratio.toFixed(1)} | ${CACHES_TB.map((tb) => {
        const r = results.find((x) => x.ratio === ratio && x.cacheTB === tb) ?? { hitRate: 0 };
        const gain =
          ratio < 1 && whole(tb) > 0
            ? ` (+${((r.hitRate / whole(tb) - 1) * 100).toFixed(0)} %)`
            : '';
        return `${(r.hitRate * 100).toFixed(1)} %${gain}`;
      }).join(' | ')} |`,
  ),
  '',
];
console.log(lines.join('\n'));
const out = join(here, 'results');
await mkdir(out, { recursive: true });
await writeFile(
  join(out, 'prefix-sim.json'),
  `${JSON.stringify({ name: 'prefix-sim', synthetic: true, date: new Date().toISOString(), uniqueBytes: unique, results }, null, 2)}\n`,
);
await writeFile(
  join(out, 'prefix-sim.md'),
  `# Seed 002 Fig. 6 (synthetic trace)\n${lines.join('\n')}`,
);
const png = await plotPng(join(out, 'prefix-sim.png'), {
  title: 'cache hit rate vs cache size (SYNTHETIC JASMine-shaped trace)',
  xlabel: 'cache size (TB)',
  ylabel: 'hit rate',
  series: RATIOS.map((ratio) => ({
    title: `prefix ratio ${ratio.toFixed(1)}`,
    points: results
      .filter((r) => r.ratio === ratio)
      .map((r) => /** @type {[number, number]} */ ([r.cacheTB, r.hitRate])),
  })),
});
if (png) console.error(`plot: ${png}`);
