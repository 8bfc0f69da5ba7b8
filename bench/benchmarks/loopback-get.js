// `freeloader get` on loopback from 4 donors (no shaping): verified MB/s next to curl from nginx
// on the same machine, plus the donors' resident memory while they serve flat out. The dataset
// is read encrypted (the default) and, interleaved run by run on the same load, imported with
// --no-encrypt: the client's CPU-seconds per GiB of each, and their ratio (issue 17's budget).
import { chmod, mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { loopbackReadCosts } from '../lib/baselines.js';
import { freePortBlock } from '../lib/free-ports.js';
import { startLoopbackCluster } from '../lib/loopback-cluster.js';
import { cpuCeilingMBps } from '../lib/proc-stat.js';
import { medianCost, quietDonors, readCost } from '../lib/read-cost.js';
import { sampleRss } from '../lib/repair-watch.js';
import { startNginx } from '../lib/nginx.js';
import { LOOPBACK } from '../lib/processes.js';

/** Target from the data-path issue: ≥ 1 GB/s verified. */
const TARGET_MBPS = 1000;
/** An agent serving flat out must stay under this resident size (bytes). */
const RSS_LIMIT = 150 * 1e6;
/** Issue 17's budget: encrypted reads cost at most this × the client CPU of reads in clear. */
const ENCRYPTION_CPU_BUDGET = 1.25;
/** How often the donors' resident size is sampled during the reads (milliseconds). */
const RSS_SAMPLE_MS = 100;
/** Reads of each kind per run: the CPU figures are medians of these. */
const RUNS = 3;

/** @typedef {import('../lib/read-cost.js').ReadCost} ReadCost */

export default {
  name: 'loopback-get',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const bytes = (ctx.quick ? 256 : 1024) * 2 ** 20;
    const work = ctx.workDir('loopback-get');
    const home = join(work, 'home');
    await mkdir(home, { recursive: true });
    await chmod(work, 0o711);
    await chmod(home, 0o711);
    const ds = await ctx.dataset(bytes);
    const rows = [];
    // The peer: curl from nginx (sendfile) through the same loopback stack, unverified, with
    // what a GiB costs both ends — the floor the verified reads' CPU below is set against.
    const curlRuns = await loopbackReadCosts(ds, ds.dir, join(work, 'nginx-curl'), RUNS);
    const curl = { mbps: Math.max(...curlRuns.map((r) => r.mbps)) };
    const curlCost = medianCost(curlRuns);
    rows.push({
      case: 'curl ← nginx (loopback)',
      params: { bytes, runs: curlRuns.map((r) => r.mbps) },
      mbps: curl.mbps,
      limitMbps: null,
      note: 'peer, no verification',
    });

    const [webPort] = await freePortBlock([7790]);
    const web = await startNginx(LOOPBACK, {
      root: ds.dir,
      workDir: join(work, 'nginx-src'),
      port: webPort,
    });
    const cluster = await startLoopbackCluster({
      home,
      agents: 4,
      quota: '2GiB',
      port: 7780,
      agentBasePort: 7781,
      log: ctx.log,
    });
    try {
      const imported = ['--width', '4', '--wait'];
      // A build from before encrypted morsels (BENCH_FREELOADER_ROOT) stores both in clear.
      const help = await cluster.cli(['import', '--help'], 60_000);
      const encrypts = help.stdout.includes('--no-encrypt');
      await cluster.cli(
        ['import', web.url(ds.name), '--name', 'bench/loopback.bin', ...imported],
        600_000,
      );
      await cluster.cli(
        [
          'import',
          web.url(ds.name),
          '--name',
          'bench/loopback-clear.bin',
          ...(encrypts ? ['--no-encrypt'] : []),
          ...imported,
        ],
        600_000,
      );
      const pids = cluster.agentPids();
      // Each donor's peak while the reads run (the imports before are not counted: VmHWM is).
      const rss = sampleRss(pids, RSS_SAMPLE_MS);
      /** @type {Array<{ pid: number, peakRss: number, hwm: number }>} */
      let memory = [];
      /** Every run's cost: the dataset as imported by default, and stored in clear. */
      const runs = {
        sealed: /** @type {ReadCost[]} */ ([]),
        clear: /** @type {ReadCost[]} */ ([]),
      };
      /** @type {number[]} each donor's idle CPU-s per s */
      const idleRates = [];
      /** What opened the encrypted reads' morsels, as `get --stats` says (native addon or not). */
      let openedBy = '';
      const read = (/** @type {string} */ name) => async () => {
        const { stderr } = await cluster.cli(['get', name, '-o', '/dev/null', '--stats'], 600_000);
        openedBy = /^morsels opened by (.+)$/m.exec(stderr)?.[1] ?? openedBy;
        return stderr;
      };
      try {
        // Median of three even when quick: CPU per GiB is the figure before/after compares.
        // Donors' heartbeats and probes cost them CPU whether or not anyone reads: measured
        // once they are quiet after the imports, and taken off what each read is charged.
        const idle = await quietDonors(pids, ctx.log);
        idleRates.push(...idle);
        for (let i = 0; i < RUNS; i++) {
          runs.sealed.push(await readCost(pids, bytes, read('bench/loopback.bin'), idle));
          // The same read in clear right after, on the same load.
          runs.clear.push(await readCost(pids, bytes, read('bench/loopback-clear.bin'), idle));
        }
      } finally {
        memory = rss.stop();
      }
      const peak = Math.max(...memory.map((m) => m.peakRss));
      const rates = runs.sealed.map((r) => r.mbps);
      const clearRates = runs.clear.map((r) => r.mbps);
      const best = Math.max(...rates);
      const sealed = medianCost(runs.sealed);
      const clear = medianCost(runs.clear);
      // What a GiB costs the machine, and the rate its cores could sustain at that cost.
      const perGiB = sealed.run.total;
      const cores = availableParallelism();
      const ceiling = cpuCeilingMBps(perGiB, cores);
      const sealedName = encrypts ? 'encrypted (the default)' : 'default import (no encryption)';
      rows.push({
        case: `freeloader get, 4 donors (loopback), ${sealedName}`,
        params: { bytes, runs: rates },
        mbps: best,
        limitMbps: TARGET_MBPS,
        targetRatio: 1,
        note:
          (encrypts ? "every morsel's AES-GCM tag checked as it is opened" : '') +
          (openedBy ? ` (by ${openedBy})` : '') +
          (encrypts ? '; ' : '') +
          `${(best / curl.mbps).toFixed(2)}× curl`,
      });
      rows.push({
        case: 'freeloader get, 4 donors (loopback), stored in clear (--no-encrypt)',
        params: { bytes, runs: clearRates },
        mbps: Math.max(...clearRates),
        limitMbps: TARGET_MBPS,
        targetRatio: 1,
        note: 'every morsel SHA-256 verified; interleaved with the encrypted runs',
      });
      for (const [label, cost, all] of /** @type {const} */ ([
        [sealedName, sealed, runs.sealed],
        ['stored in clear', clear, runs.clear],
      ])) {
        rows.push({
          case: `CPU-s per GiB, ${label}, client + 4 donors (median of ${all.length})`,
          params: {
            totalCpuSecondsPerGiB: all.map((r) => r.total),
            clientCpuSecondsPerGiB: all.map((r) => r.client),
            donorCpuSecondsPerGiB: all.map((r) => r.donors),
            donorIdleCpuSecondsPerSecond: idleRates,
          },
          mbps: cost.run.total,
          limitMbps: null,
          note: `CPU-s, not MB/s: ${cost.text} (donors net of their idle rate)`,
        });
      }
      rows.push({
        case: `CPU-s per GiB, curl ← nginx (no verification), client + server (median of ${curlRuns.length})`,
        params: {
          totalCpuSecondsPerGiB: curlRuns.map((r) => r.total),
          clientCpuSecondsPerGiB: curlRuns.map((r) => r.client),
          serverCpuSecondsPerGiB: curlRuns.map((r) => r.donors),
        },
        mbps: curlCost.run.total,
        limitMbps: null,
        note:
          `CPU-s, not MB/s: ${curlCost.text.replace('+ donors', '+ nginx')}; ` +
          `FreeLoader ${sealedName} costs ${(sealed.run.total / curlCost.run.total).toFixed(2)}× it`,
      });
      const encCpu = sealed.run.client.user + sealed.run.client.system;
      const plainCpu = clear.run.client.user + clear.run.client.system;
      rows.push({
        case: 'client CPU-s per GiB: encrypted / in clear (budget ≤ 1.25×)',
        params: { encrypts },
        mbps: encCpu / plainCpu,
        limitMbps: ENCRYPTION_CPU_BUDGET,
        targetRatio: encrypts ? 1 : null,
        lowerIsBetter: true,
        note:
          `ratio, not MB/s: ${encCpu.toFixed(2)} vs ${plainCpu.toFixed(2)} CPU-s/GiB ` +
          '(median runs); pass when at most the budget',
      });
      rows.push({
        case: `CPU-bound ceiling on ${cores} cores (client + donors CPU per GiB)`,
        params: { cpuSecondsPerGiB: perGiB, cores },
        mbps: ceiling,
        limitMbps: null,
        note: `${sealed.text}; get reached ${(best / ceiling).toFixed(2)} of it`,
      });
      rows.push({
        case: 'donor peak RSS while serving (MB)',
        params: {
          agents: pids.length,
          perDonorMB: memory.map((m) => Math.round(m.peakRss / 1e6)),
          perDonorHwmMB: memory.map((m) => Math.round(m.hwm / 1e6)),
        },
        mbps: peak / 1e6,
        limitMbps: RSS_LIMIT / 1e6,
        targetRatio: 1,
        lowerIsBetter: true,
        note:
          `MB, not MB/s: VmRSS sampled every ${RSS_SAMPLE_MS / 1000} s during the gets; ` +
          'VmHWM (since start: imports too) in params',
      });
      if (peak > RSS_LIMIT)
        ctx.log(`agent RSS ${Math.round(peak / 1e6)} MB exceeds ${RSS_LIMIT / 1e6} MB`);
    } finally {
      await cluster.stop();
      await web.stop();
    }
    return ctx.report('loopback-get', { bytes }, rows, {});
  },
};
