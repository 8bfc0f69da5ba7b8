import { describe, expect, it } from 'vitest';
import { simulatePrefixCache } from './prefix-cache-sim.js';
import { syntheticTrace } from './synthetic-trace.js';

describe('syntheticTrace', () => {
  it('has the JASMine shape and is deterministic', () => {
    const t = syntheticTrace();
    expect(t.accesses).toHaveLength(4000);
    expect(t.sizes).toHaveLength(1686);
    expect(Math.min(...t.sizes)).toBeGreaterThanOrEqual(2e9);
    expect(new Set(t.accesses).size).toBe(1686);
    // Skewed: the 10 % most accessed datasets draw well over 10 % of the accesses.
    const counts = new Map();
    for (const d of t.accesses) counts.set(d, (counts.get(d) ?? 0) + 1);
    const top = [...counts.values()].sort((a, b) => b - a).slice(0, 169);
    expect(top.reduce((a, b) => a + b, 0) / 4000).toBeGreaterThan(0.25);
    expect(syntheticTrace().accesses).toEqual(t.accesses);
  });
});

describe('simulatePrefixCache', () => {
  const tiny = { sizes: [100, 100, 100], accesses: [0, 1, 0, 2, 0, 1] };
  it.each([
    // 200 bytes hold two whole datasets: 0,1 miss, 0 hit, 2 evicts 1 (LRU), 0 hit, 1 miss.
    ['whole datasets', 200, 1, 2],
    // Prefixes of 50: 0 whole, 1 whole, 0 hit, 2 trims 0 and caches 50, 0 hit, 1 hit.
    ['half prefixes', 200, 0.5, 3],
    ['room for everything', 300, 1, 3],
  ])('%s', (_name, capacity, ratio, hits) => {
    expect(simulatePrefixCache(tiny, capacity, ratio).hits).toBe(hits);
  });

  it('caches more datasets with smaller prefixes on a synthetic trace', () => {
    const t = syntheticTrace({ datasets: 300, accesses: 800 });
    const total = t.sizes.reduce((a, b) => a + b, 0);
    const whole = simulatePrefixCache(t, total * 0.05, 1).hitRate;
    const prefix = simulatePrefixCache(t, total * 0.05, 0.2).hitRate;
    expect(prefix).toBeGreaterThan(whole);
  });
});
