// Issue 15 item 4: what the background scrub costs a donor. The agent's own store and scrubber
// (apps/agent/dist) over a real filesystem store: CPU-seconds per GiB re-hashed at full speed
// (one whole pass) and at the default pace (a full pass per 14 days, kept within its floor and
// ceiling), measured on this process's CPU clock, the scrub being the only work in it. The data
// was just written, so reads mostly come from the page cache: the figures are the hashing and
// copying a scrub costs, which an uncached read does not lower (DMA costs the CPU less).
import { randomBytes, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { FsStore } from '../../apps/agent/dist/store/fs-store.js';
import { scrubRate } from '../../apps/agent/dist/store/scrub-rate.js';
import { Scrubber } from '../../apps/agent/dist/store/scrubber.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** CPU seconds this process used since `from` (process.cpuUsage()). @param {NodeJS.CpuUsage} from */
const cpuSince = (from) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1e6;
};

export default {
  name: 'scrub',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const bytes = (ctx.quick ? 256 : 1024) * MiB;
    const defaultWindowS = ctx.quick ? 30 : 120;
    const work = ctx.workDir('scrub');
    const store = await FsStore.open(join(work, 'store'));
    const loads = [loadavg()[0] ?? 0];
    const rows = [];
    try {
      const id = randomUUID();
      const count = bytes / MiB;
      await store.create(id, { morselSize: MiB, planned: [...Array(count).keys()] });
      const chunk = randomBytes(MiB);
      for (let i = 0; i < count; i++) {
        chunk.writeUInt32LE(i, 0); // distinct morsels
        await store.put(id, i, chunk);
      }
      ctx.log(`stored ${bytes / MiB} MiB; scrubbing one pass at full speed`);

      // 1. Full speed: one whole pass, step by step (what `--scrub-rate max` runs).
      const fast = scrubber(store, join(work, 'fast.json'), { bytesPerSecond: Infinity });
      loads.push(loadavg()[0] ?? 0);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      let checked = 0;
      for (let i = 0; i < count; i++) checked += await fast.step();
      const fastCpu = cpuSince(cpu0);
      const fastWall = (performance.now() - t0) / 1000;
      if (fast.status().badMorsels !== 0)
        throw new Error('the scrub found bad morsels in good data');
      rows.push(
        {
          case: 'full speed: CPU-seconds per GiB scrubbed',
          params: { bytes, wallSeconds: Number(fastWall.toFixed(2)) },
          mbps: (fastCpu * GiB) / checked,
          limitMbps: null,
          note: 'CPU s/GiB, not MB/s (hash + read of every morsel)',
        },
        {
          case: 'full speed: scrub rate (MB/s)',
          params: { bytes },
          mbps: checked / fastWall / 1e6,
          limitMbps: null,
          note: 'one core at most: verify runs one morsel at a time',
        },
      );

      // 2. The default pace, for a window: the scrubber's own loop and sleeps, as in the agent.
      // This process's own idle CPU (timers, GC) over the same kind of window is subtracted.
      const idleS = Math.min(15, defaultWindowS);
      const cpuIdle = process.cpuUsage();
      await sleep(idleS * 1000);
      const idlePerS = cpuSince(cpuIdle) / idleS;
      const rate = scrubRate(bytes, {});
      ctx.log(`default pace: ${(rate / 1024).toFixed(0)} KiB/s for ${defaultWindowS} s`);
      const slow = scrubber(store, join(work, 'slow.json'), {});
      loads.push(loadavg()[0] ?? 0);
      const cpu1 = process.cpuUsage();
      const t1 = performance.now();
      slow.start();
      await sleep(defaultWindowS * 1000);
      await slow.stop();
      const slowWall = (performance.now() - t1) / 1000;
      const slowCpu = Math.max(0, cpuSince(cpu1) - idlePerS * slowWall);
      const slowChecked = slow.status().checkedBytes;
      loads.push(loadavg()[0] ?? 0);
      rows.push(
        {
          case: 'default pace: CPU-seconds per GiB scrubbed',
          params: {
            rateBps: Math.round(rate),
            windowSeconds: defaultWindowS,
            checked: slowChecked,
            idleCpuPerS: Number(idlePerS.toFixed(4)),
          },
          mbps: slowChecked > 0 ? (slowCpu * GiB) / slowChecked : 0,
          limitMbps: null,
          note: 'CPU s/GiB; the floor rate (64 KiB/s) for a store this small; idle CPU subtracted',
        },
        {
          case: 'default pace: share of one core (%)',
          params: { rateBps: Math.round(rate) },
          mbps: (100 * slowCpu) / slowWall,
          limitMbps: 1,
          targetRatio: 1,
          lowerIsBetter: true,
          note: '% of one core, not MB/s; target ≤ 1 %',
        },
        {
          case: 'default pace: a full pass of this store takes (hours)',
          params: { bytes, rateBps: Math.round(rate) },
          mbps: bytes / rate / 3600,
          limitMbps: null,
          note: 'hours, not MB/s: a pass per 14 days, or faster at the floor rate',
        },
      );
    } finally {
      await store.close();
    }
    return ctx.report('scrub', { quick: ctx.quick }, rows, {
      loadavg1AtRuns: loads.map((l) => Number(l.toFixed(2))),
    });
  },
};

/**
 * The agent's Scrubber over `store`, never held (no owner here), reporting nothing.
 *
 * @param {FsStore} store
 * @param {string} positionFile
 * @param {import('../../apps/agent/dist/store/scrub-rate.js').ScrubSettings} settings
 */
function scrubber(store, positionFile, settings) {
  return new Scrubber({
    store,
    positionFile,
    settings: () => settings,
    held: () => false,
    onBad: () => undefined,
  });
}
