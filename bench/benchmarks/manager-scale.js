// Issue 16's manager-scale benchmark: thousands of synthetic agents (bench/lib/synthetic-agents.js:
// the requests and intervals of a real agent, job channel held open) against one manager in its
// own process on embedded PostgreSQL. Per fleet size: heartbeat latency p50/p99/max, errors, CPU and memory of the manager, of its PostgreSQL and of this load
// generator (all on the same cores), and the manager side's CPU per agent-second.
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startManagerProcess } from '../lib/manager-process.js';
import { cpuSeconds } from '../lib/proc-stat.js';
import { groupCpuSeconds, memoryBytes } from '../lib/process-tree.js';
import { SyntheticFleet } from '../lib/synthetic-agents.js';

/** The target: p99 of heartbeat latency at the largest fleet (ms). */
const P99_TARGET_MS = 50;
/** How often memory is sampled during a window (ms). */
const SAMPLE_MS = 5_000;
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The q-quantile of unsorted samples (nearest rank).
 *
 * @param {number[]} xs @param {number} q
 * @example quantile([3, 1, 2], 0.5) === 2
 */
export function quantile(xs, q) {
  if (xs.length === 0) return 0;
  const s = Float64Array.from(xs).sort();
  return /** @type {number} */ (s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? 0);
}

/** Fleet sizes: MANAGER_SCALE_AGENTS=1000,2000 or the defaults. @param {boolean} quick */
function levels(quick) {
  const env = process.env.MANAGER_SCALE_AGENTS;
  if (env) return env.split(',').map(Number);
  return quick ? [1_000, 5_000] : [1_000, 5_000, 10_000];
}

export default {
  name: 'manager-scale',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const sizes = levels(ctx.quick);
    const windowS = Number(process.env.MANAGER_SCALE_WINDOW_S ?? (ctx.quick ? 30 : 60));
    // Two managers on one PostgreSQL come with stateless managers (issue 16 item 3): this
    // parameter is where they plug in; today only 1 is run.
    const managers = 1;
    const profDir = process.env.MANAGER_SCALE_CPU_PROF
      ? mkdtempSync(join(tmpdir(), 'fl-manager-scale-prof-'))
      : undefined;
    const mgr = await startManagerProcess({
      home: join(ctx.workDir('manager-scale'), 'home'),
      ...(profDir ? { cpuProfDir: profDir } : {}),
      log: ctx.log,
    });
    const fleet = new SyntheticFleet({ url: mgr.url, log: ctx.log });
    const rows = [];
    const loads = [loadavg()[0] ?? 0];
    /** @type {Record<string, unknown>[]} */
    const levelsOut = [];
    try {
      const login = await fetch(`${mgr.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: mgr.adminPassword }),
      });
      const adminAuth = `Bearer ${(await login.json()).token}`;
      for (const size of sizes) {
        const t0 = performance.now();
        const added = await fleet.enroll(size - fleet.agents.length, adminAuth);
        const enrollS = (performance.now() - t0) / 1000;
        ctx.log(`${size} agents: enrolled ${added.length} in ${enrollS.toFixed(1)} s; starting`);
        await fleet.start(added);
        // Steady state first: every agent heard once (a new agent's first heartbeat writes its
        // URL and probe to its row) and holding its channel.
        const settled = performance.now() + 600_000;
        while (
          (fleet.openChannels < size * 0.99 || fleet.beaten < size) &&
          performance.now() < settled
        ) {
          await sleep(1_000);
        }
        // One interval more, so every agent is in its steady beat before the window opens.
        await sleep(fleet.intervalMs);
        const m = await measureWindow(fleet, mgr, windowS);
        loads.push(loadavg()[0] ?? 0);
        // In the steady state an agent sends heartbeats and holds its wait; it claims only when
        // woken (no jobs are queued here), so the heartbeat is the short request to time.
        const short = fleet.latencies.heartbeat ?? [];
        const agentSeconds = size * m.wallS;
        const level = {
          agents: size,
          managers,
          enrollSeconds: Number(enrollS.toFixed(2)),
          enrollPerSecond: Math.round(added.length / enrollS),
          windowSeconds: Number(m.wallS.toFixed(1)),
          requests: { ...fleet.counts },
          heartbeatsPerSecond: Math.round(fleet.counts.heartbeat / m.wallS),
          openChannels: fleet.openChannels,
          latencyMs: {
            p50: round(quantile(short, 0.5)),
            p99: round(quantile(short, 0.99)),
            max: round(Math.max(0, ...short)),
          },
          errors: { ...fleet.errors },
          errorSamples: fleet.errorSamples,
          cpuShareOfOneCore: {
            manager: round(m.managerCpuS / m.wallS),
            postgres: round(m.pgCpuS / m.wallS),
            loadGenerator: round(m.selfCpuS / m.wallS),
          },
          maxMemoryMiB: {
            manager: round(m.managerMemMax / 2 ** 20),
            postgres: round(m.pgMemMax / 2 ** 20),
            loadGenerator: round(m.selfMemMax / 2 ** 20),
          },
          cpuMsPerAgentSecond: round(((m.managerCpuS + m.pgCpuS) * 1000) / agentSeconds, 4),
          loadavg1: round(loadavg()[0] ?? 0),
        };
        levelsOut.push(level);
        ctx.log(JSON.stringify(level));
        rows.push(...levelRows(level, size === sizes[sizes.length - 1]));
      }
    } finally {
      await fleet.stop();
      await mgr.stop();
      if (profDir) ctx.log(`manager CPU profile in ${profDir}`);
    }
    return ctx.report('manager-scale', { sizes, windowS, managers }, rows, {
      levels: levelsOut,
      loadavgDuring: loads.map((l) => round(l)),
      note: 'shared 2-core machine: other engineers were building and testing at the same time',
    });
  },
};

/**
 * CPU and peak memory of the manager, its PostgreSQL and this process over one window, with
 * the fleet's counters reset at its start.
 *
 * @param {SyntheticFleet} fleet @param {import('../lib/manager-process.js').ManagerProcess} mgr
 * @param {number} windowS
 */
async function measureWindow(fleet, mgr, windowS) {
  const pg0 = groupCpuSeconds(mgr.databasePids());
  const mgr0 = cpuSeconds(mgr.pid);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  fleet.resetStats();
  let managerMemMax = 0;
  let pgMemMax = 0;
  let selfMemMax = 0;
  const until = t0 + windowS * 1000;
  while (performance.now() < until) {
    await sleep(Math.min(SAMPLE_MS, until - performance.now()));
    managerMemMax = Math.max(managerMemMax, memoryBytes(mgr.pid));
    pgMemMax = Math.max(
      pgMemMax,
      mgr.databasePids().reduce((s, p) => s + memoryBytes(p), 0),
    );
    selfMemMax = Math.max(selfMemMax, process.memoryUsage().rss);
  }
  const self = process.cpuUsage(self0);
  return {
    wallS: (performance.now() - t0) / 1000,
    managerCpuS: cpuSeconds(mgr.pid) - mgr0,
    pgCpuS: groupCpuSeconds(mgr.databasePids()) - pg0,
    selfCpuS: (self.user + self.system) / 1e6,
    managerMemMax,
    pgMemMax,
    selfMemMax,
  };
}

/**
 * The report's rows for one fleet size; the largest carries the p99 target.
 *
 * @param {{ agents: number, managers: number, windowSeconds: number, enrollPerSecond: number,
 *   latencyMs: { p50: number, p99: number, max: number }, errors: Record<string, number>,
 *   cpuShareOfOneCore: { manager: number, postgres: number, loadGenerator: number },
 *   cpuMsPerAgentSecond: number }} level
 * @param {boolean} last
 */
export function levelRows(level, last) {
  const size = level.agents;
  const errors = Object.values(level.errors).reduce((a, b) => a + b, 0);
  return [
    {
      case: `${size} agents: heartbeat p99 latency (ms)`,
      params: { agents: size, managers: level.managers, windowSeconds: level.windowSeconds },
      mbps: level.latencyMs.p99,
      limitMbps: last ? P99_TARGET_MS : null,
      targetRatio: last ? 1 : null,
      lowerIsBetter: true,
      note: `ms, not MB/s; p50 ${level.latencyMs.p50}, max ${level.latencyMs.max}; errors ${errors}`,
    },
    {
      case: `${size} agents: manager + PostgreSQL CPU per agent-second (ms)`,
      params: { agents: size },
      mbps: level.cpuMsPerAgentSecond,
      limitMbps: null,
      note: `CPU ms; manager ${level.cpuShareOfOneCore.manager}, PostgreSQL ${level.cpuShareOfOneCore.postgres}, load generator ${level.cpuShareOfOneCore.loadGenerator} of one core`,
    },
    {
      case: `${size} agents: enrollment (agents/s)`,
      params: { agents: size },
      mbps: level.enrollPerSecond,
      limitMbps: null,
      note: 'agents/s, not MB/s: parallel enrollment with multi-use join tokens',
    },
  ];
}

/** @param {number} x @param {number} [digits] */
function round(x, digits = 2) {
  return Number(x.toFixed(digits));
}
