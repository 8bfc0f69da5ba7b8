// Seed §5.4 / Fig. 12 on one donor: the owner's native workloads timed with no FreeLoader, with
// a client reading from the donor at full speed ungoverned, and governed (the owner's input
// reported as the tray does); plus how fast serving falls after owner input and recovers.
// Loopback, one machine: the client's own CPU counts as the donor owner's "native" load here,
// which a real LAN would not do — the governed figures are therefore conservative.
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { SettingsClient } from '../../apps/agent/dist/control-api/settings-client.js';
import { freePortBlock } from '../lib/free-ports.js';
import { startLoopbackCluster } from '../lib/loopback-cluster.js';
import { compositeWorkload, cpuWorkload, uncachedReadWorkload } from '../lib/native-workloads.js';
import { startNginx } from '../lib/nginx.js';
import { cpuSeconds } from '../lib/proc-stat.js';
import { LOOPBACK } from '../lib/processes.js';
import { adminClient, startReadingClient } from '../lib/reading-client.js';
import { median } from '../lib/stats.js';

const MiB = 2 ** 20;
const ACTIVE_CAP = 2 * MiB;
/** Governed composite workload slowdown target (issue 8): ≤ 5 %. */
const SLOWDOWN_TARGET = 0.05;
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Governor settings that never throttle (the "ungoverned" column), and the defaults. */
const UNGOVERNED = {
  idleCapBps: null,
  activeCapBps: 1000 * MiB,
  thresholds: { cpu: 2, memory: 2, diskBps: 1e15, netBps: 1e15 },
};
const GOVERNED = {
  idleCapBps: null,
  activeCapBps: ACTIVE_CAP,
  sensitivity: 'medium',
  thresholds: {},
};

export default {
  name: 'governor',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const runs = ctx.quick ? 1 : 3;
    const work = ctx.workDir('governor');
    const home = join(work, 'home');
    await mkdir(home, { recursive: true });
    await chmod(work, 0o711);
    await chmod(home, 0o711);
    const ds = await ctx.dataset((ctx.quick ? 64 : 256) * MiB);
    const big = await ctx.dataset((ctx.quick ? 256 : 1024) * MiB); // the uncached-read file
    const [webPort] = await freePortBlock([7970]);
    const web = await startNginx(LOOPBACK, {
      root: ds.dir,
      workDir: join(work, 'nginx'),
      port: webPort,
    });
    // The governed donor watches this machine's load: turn that back on for this cluster.
    process.env.FREELOADER_IGNORE_LOAD = '0';
    const cluster = await startLoopbackCluster({
      home,
      agents: 1,
      quota: '2GiB',
      port: 7960,
      agentBasePort: 7961,
      log: ctx.log,
    }).finally(() => delete process.env.FREELOADER_IGNORE_LOAD);
    const rows = [];
    /** @type {number[]} load averages seen at each workload run: the machine is shared. */
    const loads = [];
    try {
      await cluster.cli(['import', web.url(ds.name), '--name', 'bench/gov.bin', '--wait'], 600_000);
      const agentDir = join(home, 'cluster', 'agent-1');
      const settings = new SettingsClient(
        (await readFile(join(agentDir, 'settings-url'), 'utf8')).trim(),
        (await readFile(join(agentDir, 'settings-token'), 'utf8')).trim(),
      );
      const manager = await adminClient(cluster.url, home);
      const agentPid = cluster.agentPids()[0];

      // 1. Owner input → serving falls within a second, and recovers when the owner leaves.
      await settings.update({ governor: { ...UNGOVERNED, activeCapBps: ACTIVE_CAP } });
      await settings.reportIdle(3_600_000);
      const client = await startReadingClient(manager, 'bench/gov.bin');
      let response;
      try {
        response = await ownerResponse(client, settings);
      } finally {
        await client.stop();
      }
      ctx.log(`owner input: ${JSON.stringify(response)}`);
      rows.push(
        {
          case: 'serving falls to the active cap after owner input (s)',
          params: { activeCapMBps: ACTIVE_CAP / 1e6, beforeMBps: response.before / 1e6 },
          mbps: response.dropSeconds,
          limitMbps: 1,
          targetRatio: 1,
          lowerIsBetter: true,
          note: 's, not MB/s: first 200 ms window at ≤ 1.5 × the cap',
        },
        {
          case: 'serving recovers after the owner leaves (s)',
          params: { afterMBps: response.after / 1e6 },
          mbps: response.recoverSeconds,
          limitMbps: 2,
          targetRatio: 1,
          lowerIsBetter: true,
          note: 's: first 200 ms window back at ≥ half the rate before the input',
        },
      );

      // 2. Native workloads: none / ungoverned / governed.
      const workloads = {
        composite: () => compositeWorkload(join(work, 'composite'), '/usr/share/doc'),
        'cpu-bound (bzip2 -9)': () => cpuWorkload(join(work, 'cpu'), (ctx.quick ? 24 : 64) * 1e6),
        'large uncached read': () => uncachedReadWorkload(join(big.dir, big.name)),
      };
      for (const [name, workload] of Object.entries(workloads)) {
        // Modes interleaved run by run, so the shared machine's drifting load hits all three.
        /** @type {Record<'none' | 'ungoverned' | 'governed' | 'ungovernedBps' | 'governedBps' | 'governedCpu', number[]>} */
        const samples = {
          none: [],
          ungoverned: [],
          governed: [],
          ungovernedBps: [],
          governedBps: [],
          governedCpu: [],
        };
        for (let r = 0; r < runs; r++) {
          // The same settling second the client modes get (the last run's deletes flush).
          await sleep(1_000);
          loads.push(loadavg()[0] ?? 0);
          samples.none.push(await workload());
          const u = await withClient(manager, settings, UNGOVERNED, false, workload, agentPid);
          samples.ungoverned.push(u.seconds);
          samples.ungovernedBps.push(u.clientBps);
          const g = await withClient(manager, settings, GOVERNED, true, workload, agentPid);
          samples.governed.push(g.seconds);
          samples.governedBps.push(g.clientBps);
          samples.governedCpu.push(g.agentCpuMsPerS);
        }
        const none = median(samples.none);
        const ungoverned = {
          seconds: median(samples.ungoverned),
          clientBps: median(samples.ungovernedBps),
        };
        const governed = {
          seconds: median(samples.governed),
          clientBps: median(samples.governedBps),
        };
        ctx.log(
          `${name}: none ${none.toFixed(2)} s, ungoverned ${ungoverned.seconds.toFixed(2)} s, governed ${governed.seconds.toFixed(2)} s`,
        );
        /** @param {number} s */
        const slow = (s) => s / none - 1;
        rows.push(
          {
            case: `${name}: slowdown, FreeLoader ungoverned`,
            params: { noneSeconds: none, seconds: ungoverned.seconds, runs: samples.ungoverned },
            mbps: slow(ungoverned.seconds),
            limitMbps: null,
            targetRatio: null,
            note: 'fraction (0.05 = 5 %), informational',
          },
          {
            case: `${name}: slowdown, governed`,
            params: {
              noneSeconds: samples.none,
              seconds: governed.seconds,
              runs: samples.governed,
            },
            mbps: slow(governed.seconds),
            limitMbps: name === 'composite' ? SLOWDOWN_TARGET : null,
            targetRatio: name === 'composite' ? 1 : null,
            lowerIsBetter: true,
            note: name === 'composite' ? 'fraction; target ≤ 0.05' : 'fraction, informational',
          },
          {
            // What the governed donor itself costs the owner's machine, whatever else runs.
            case: `${name}: donor agent CPU while governed (ms/s)`,
            params: { runs: samples.governedCpu },
            mbps: median(samples.governedCpu),
            limitMbps: null,
            targetRatio: null,
            note: 'ms of CPU per second (1000 = one core), informational',
          },
          {
            case: `${name}: client MB/s ungoverned → governed`,
            params: { ungovernedMBps: ungoverned.clientBps / 1e6 },
            mbps: governed.clientBps / 1e6,
            limitMbps: ungoverned.clientBps / 1e6,
            targetRatio: null,
            note: `client throughput loss ${(100 * (1 - governed.clientBps / ungoverned.clientBps)).toFixed(0)} % (seed Fig. 12)`,
          },
        );
      }
    } finally {
      await cluster.stop();
      await web.stop();
    }
    return ctx.report('governor', { quick: ctx.quick }, rows, {
      activeCapBps: ACTIVE_CAP,
      loadavg1AtRuns: loads.map((l) => Number(l.toFixed(2))),
    });
  },
};

/**
 * Time `workload` while a client reads from the donor, with the given governor settings; when
 * `ownerActive`, report owner input every 500 ms as the tray would while someone works. Also
 * the donor agent's CPU over the workload (its own and its children's, from /proc).
 *
 * @param {import('../../apps/agent/dist/manager-client.js').ManagerClient} manager
 * @param {SettingsClient} settings
 * @param {Record<string, unknown>} governor
 * @param {boolean} ownerActive
 * @param {() => Promise<number>} workload
 * @param {number | undefined} agentPid
 */
async function withClient(manager, settings, governor, ownerActive, workload, agentPid) {
  await settings.update({ governor });
  await settings.reportIdle(ownerActive ? 0 : 3_600_000);
  const ticker = ownerActive ? setInterval(() => void settings.reportIdle(0), 500) : undefined;
  const client = await startReadingClient(manager, 'bench/gov.bin');
  try {
    await sleep(1_000); // the client at speed first
    const from = performance.now();
    const cpuFrom = cpuSeconds(agentPid, { children: true }) * 1000;
    const seconds = await workload();
    const to = performance.now();
    return {
      seconds,
      clientBps: client.rateIn(from, to),
      agentCpuMsPerS:
        (cpuSeconds(agentPid, { children: true }) * 1000 - cpuFrom) / ((to - from) / 1000),
    };
  } finally {
    clearInterval(ticker);
    await client.stop();
  }
}

/**
 * Seconds from owner input until the client's rate is at the cap, and back after idle.
 *
 * @param {import('../lib/reading-client.js').ReadingClient} client
 * @param {SettingsClient} settings
 */
async function ownerResponse(client, settings) {
  await sleep(2_000);
  const before = client.rateIn(performance.now() - 1_000, performance.now());
  const input = performance.now();
  await settings.reportIdle(0);
  await sleep(3_000);
  const dropSeconds = firstWindow(client, input, input + 3_000, (r) => r <= 1.5 * ACTIVE_CAP);
  const left = performance.now();
  await settings.reportIdle(3_600_000);
  await sleep(3_000);
  const recoverSeconds = firstWindow(client, left, left + 3_000, (r) => r >= before / 2);
  return {
    before,
    after: client.rateIn(performance.now() - 1_000, performance.now()),
    dropSeconds,
    recoverSeconds,
  };
}

/**
 * End of the first 200 ms window in [from, to) whose rate satisfies `ok`, in s after `from`.
 *
 * @param {import('../lib/reading-client.js').ReadingClient} client
 * @param {number} from
 * @param {number} to
 * @param {(rate: number) => boolean} ok
 */
function firstWindow(client, from, to, ok) {
  for (let t = from; t + 200 <= to; t += 50) {
    if (ok(client.rateIn(t, t + 200))) return (t + 200 - from) / 1000;
  }
  return Infinity;
}
