// Issue 16's manager-scale benchmark: thousands of synthetic agents (bench/lib/synthetic-agents.js:
// the requests and intervals of a real agent, job channel held open) against one manager on
// embedded PostgreSQL, or two managers sharing one database of the system PostgreSQL. Per run:
// heartbeat latency p50/p99/max, errors, and — what a busy shared machine cannot distort — CPU:
// manager CPU ms per heartbeat (user and system), PostgreSQL CPU ms per heartbeat, and manager
// CPU per held job channel per second, measured in a window with heartbeats paused.
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryBytes } from '../lib/process-tree.js';
import { startScaleCluster } from '../lib/scale-cluster.js';
import { LATE_SEND_MS, SyntheticFleet } from '../lib/synthetic-agents.js';

/** The target: p99 of heartbeat latency at the largest fleet (ms). */
const P99_TARGET_MS = 50;
/** The target: manager CPU per heartbeat, job channel's share included (ms). */
const CPU_PER_HEARTBEAT_TARGET_MS = 0.2;
/** How often memory is sampled during a window (ms). */
const SAMPLE_MS = 5_000;
/** Heartbeats paused to measure idle job channels alone (s): well under the 15 s stale window. */
const CHANNEL_WINDOW_S = 8;
/** Heartbeats in flight when the pause starts are answered within this (ms). */
const PAUSE_SETTLE_MS = 1_000;
/** How long a fleet may take to reach its steady state (ms). */
const SETTLE_MAX_MS = 600_000;
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

/**
 * What to run: `MANAGER_SCALE_PLAN=1000x1,5000x2` (agents × managers), else every size of
 * MANAGER_SCALE_AGENTS on one manager plus, in a full run, 1,000 and 5,000 on two.
 *
 * @param {boolean} quick @param {NodeJS.ProcessEnv} env
 * @returns {{ agents: number, managers: number }[]}
 * @example plan(true, { MANAGER_SCALE_PLAN: '1000x2' }) // [{ agents: 1000, managers: 2 }]
 */
export function plan(quick, env) {
  if (env.MANAGER_SCALE_PLAN) {
    return env.MANAGER_SCALE_PLAN.split(',').map((p) => {
      const [agents, managers = '1'] = p.split('x');
      return { agents: Number(agents), managers: Number(managers) };
    });
  }
  const sizes = env.MANAGER_SCALE_AGENTS
    ? env.MANAGER_SCALE_AGENTS.split(',').map(Number)
    : quick
      ? [1_000, 5_000]
      : [1_000, 5_000, 10_000];
  const two = quick || env.MANAGER_SCALE_AGENTS ? [] : [1_000, 5_000];
  return [
    ...sizes.map((agents) => ({ agents, managers: 1 })),
    ...two.map((agents) => ({ agents, managers: 2 })),
  ];
}

export default {
  name: 'manager-scale',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const runs = plan(ctx.quick, process.env);
    // The p99 target is for the largest fleet.
    const largest = Math.max(...runs.map((r) => r.agents));
    const windowS = Number(process.env.MANAGER_SCALE_WINDOW_S ?? (ctx.quick ? 30 : 60));
    // A/B: MANAGER_SCALE_BUILDS=dist-base,dist alternates build folders of services/manager,
    // MANAGER_SCALE_ROUNDS times each, at every size (same machine, same minutes).
    const builds = (process.env.MANAGER_SCALE_BUILDS ?? 'dist').split(',');
    const rounds = Number(process.env.MANAGER_SCALE_ROUNDS ?? 1);
    const profDir = process.env.MANAGER_SCALE_CPU_PROF
      ? mkdtempSync(join(tmpdir(), 'fl-manager-scale-prof-'))
      : undefined;
    const rows = [];
    const loads = [loadavg()[0] ?? 0];
    /** @type {Record<string, unknown>[]} */
    const levelsOut = [];
    try {
      for (const r of runs) {
        for (let round = 0; round < rounds; round++) {
          for (const build of builds) {
            const level = await runLevel(ctx, { ...r, build, windowS, profDir });
            loads.push(level.loadavg1);
            levelsOut.push(level);
            ctx.log(JSON.stringify(level));
            rows.push(...levelRows(level, r.agents === largest));
          }
        }
      }
    } finally {
      if (profDir) ctx.log(`manager CPU profiles in ${profDir}`);
    }
    return ctx.report('manager-scale', { runs, windowS, builds, rounds }, rows, {
      levels: levelsOut,
      loadavgDuring: loads.map((l) => round(l)),
      note: 'shared 2-core machine: other engineers were building and testing at the same time',
    });
  },
};

/**
 * One run: fresh managers, `agents` enrolled (spread evenly over the managers), steady state,
 * then a measured window and an idle-channel window.
 *
 * @param {import('../lib/context.js').BenchContext} ctx
 * @param {{ agents: number, managers: number, build: string, windowS: number,
 *   profDir: string | undefined }} r
 */
async function runLevel(ctx, r) {
  const cluster = await startScaleCluster({
    count: r.managers,
    workDir: ctx.workDir(`manager-scale-${r.agents}x${r.managers}-${r.build.replaceAll('/', '-')}`),
    ...(r.build === 'dist' ? {} : { build: r.build }),
    ...(r.profDir ? { cpuProfDir: r.profDir } : {}),
    log: ctx.log,
  });
  const fleets = cluster.managers.map((m) => new SyntheticFleet({ url: m.url, log: ctx.log }));
  try {
    // The managers' own cost with no agent at all (timers, metrics), taken off the channels'.
    const empty = await measureIdleChannels([], cluster);
    const first = /** @type {import('../lib/manager-process.js').ManagerProcess} */ (
      cluster.managers[0]
    );
    const login = await fetch(`${first.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: cluster.adminPassword }),
    });
    const adminAuth = `Bearer ${(await login.json()).token}`;
    const share = (/** @type {number} */ i) =>
      Math.floor(r.agents / r.managers) + (i < r.agents % r.managers ? 1 : 0);
    const t0 = performance.now();
    const added = await Promise.all(fleets.map((f, i) => f.enroll(share(i), adminAuth)));
    const enrollS = (performance.now() - t0) / 1000;
    ctx.log(
      `${r.agents} agents on ${r.managers} (${r.build}): enrolled in ${enrollS.toFixed(1)} s`,
    );
    await Promise.all(fleets.map((f, i) => f.start(/** @type {any} */ (added[i]))));
    // Steady state first: every agent heard once (a new agent's first heartbeat writes its
    // URL and probe to its row) and holding its channel.
    const settled = performance.now() + SETTLE_MAX_MS;
    const sum = (/** @type {(f: SyntheticFleet) => number} */ g) =>
      fleets.reduce((n, f) => n + g(f), 0);
    while (
      (sum((f) => f.openChannels) < r.agents * 0.99 || sum((f) => f.beaten) < r.agents) &&
      performance.now() < settled
    ) {
      await sleep(1_000);
    }
    // One interval more, so every agent is in its steady beat before the window opens.
    await sleep(fleets[0]?.intervalMs ?? 5_000);
    const m = await measureWindow(fleets, cluster, r.windowS);
    const idle = await measureIdleChannels(fleets, cluster);
    const heartbeats = sum((f) => f.counts.heartbeat ?? 0);
    const short = fleets.flatMap((f) => f.latencies.heartbeat ?? []);
    const lateness = fleets.flatMap((f) => f.lateness);
    const queued = fleets.flatMap((f) => f.queued);
    const errors = /** @type {Record<string, number>} */ ({});
    for (const f of fleets) {
      for (const [k, v] of Object.entries(f.errors)) errors[k] = (errors[k] ?? 0) + v;
    }
    const managerCpuS = m.cpu.managerUser + m.cpu.managerSystem;
    const channelSeconds = idle.channels * idle.wallS;
    const emptyRate = empty.managerCpuS / empty.wallS;
    const channelsCpuS = Math.max(0, idle.managerCpuS - emptyRate * idle.wallS);
    const perChannelS = channelSeconds > 0 ? channelsCpuS / channelSeconds : 0;
    const channelsShareS = perChannelS * sum((f) => f.openChannels) * m.wallS;
    return {
      agents: r.agents,
      managers: r.managers,
      build: r.build,
      enrollSeconds: round(enrollS),
      enrollPerSecond: Math.round(r.agents / enrollS),
      windowSeconds: round(m.wallS, 1),
      requests: Object.fromEntries(
        Object.keys(fleets[0]?.counts ?? {}).map((k) => [k, sum((f) => f.counts[k] ?? 0)]),
      ),
      heartbeatsPerSecond: Math.round(heartbeats / m.wallS),
      openChannels: sum((f) => f.openChannels),
      latencyMs: {
        p50: round(quantile(short, 0.5)),
        p99: round(quantile(short, 0.99)),
        max: round(Math.max(0, ...short)),
      },
      // The generator's own delays, apart from the latency above (written to answered): how late
      // it sent heartbeats after they were due, and how long they waited for a connection.
      generator: {
        lateSends: lateness.filter((l) => l > LATE_SEND_MS).length,
        lateShare: round(
          lateness.filter((l) => l > LATE_SEND_MS).length / (lateness.length || 1),
          4,
        ),
        lateMs: { p50: round(quantile(lateness, 0.5)), p99: round(quantile(lateness, 0.99)) },
        queuedMs: { p50: round(quantile(queued, 0.5)), p99: round(quantile(queued, 0.99)) },
      },
      errors,
      errorSamples: fleets.flatMap((f) => f.errorSamples).slice(0, 5),
      cpuShareOfOneCore: {
        manager: round(managerCpuS / m.wallS),
        managerUser: round(m.cpu.managerUser / m.wallS),
        managerSystem: round(m.cpu.managerSystem / m.wallS),
        postgres: round(m.cpu.postgres / m.wallS),
        loadGenerator: round(m.selfCpuS / m.wallS),
      },
      // All of the manager's CPU in the window over its heartbeats: the job channels' share,
      // timers and liveness flushes included.
      managerCpuMsPerHeartbeat: round((managerCpuS * 1000) / heartbeats, 3),
      // The same without what the idle channels cost (measured with heartbeats paused).
      managerCpuMsPerHeartbeatNet: round(((managerCpuS - channelsShareS) * 1000) / heartbeats, 3),
      postgresCpuMsPerHeartbeat: round((m.cpu.postgres * 1000) / heartbeats, 3),
      managerCpuUsPerChannelSecond: round(perChannelS * 1e6, 2),
      managerCpuShareWithoutAgents: round(emptyRate, 3),
      idleChannelWindow: {
        seconds: round(idle.wallS, 1),
        channels: idle.channels,
        managerCpuShare: round(idle.managerCpuS / idle.wallS, 3),
        waitsAnswered: idle.waits,
      },
      maxMemoryMiB: {
        manager: round(m.managerMemMax / 2 ** 20),
        postgres: cluster.database === 'embedded' ? round(m.pgMemMax / 2 ** 20) : null,
        loadGenerator: round(m.selfMemMax / 2 ** 20),
      },
      cpuMsPerAgentSecond: round(((managerCpuS + m.cpu.postgres) * 1000) / (r.agents * m.wallS), 4),
      database: cluster.database === 'embedded' ? 'embedded' : 'system PostgreSQL (shared)',
      loadavg1: round(loadavg()[0] ?? 0),
    };
  } finally {
    // Managers first, while the fleet still holds its job channels: how long a manager holding
    // thousands of them takes to stop is part of what issue 16 asks (each stop is logged).
    await cluster.stop();
    await Promise.all(fleets.map((f) => f.stop()));
  }
}

/**
 * CPU of the managers and PostgreSQL, peak memory, over one window, with the fleets' counters
 * reset at its start.
 *
 * @param {SyntheticFleet[]} fleets @param {import('../lib/scale-cluster.js').ScaleCluster} cluster
 * @param {number} windowS
 */
async function measureWindow(fleets, cluster, windowS) {
  const cpu0 = await cluster.cpu();
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  for (const f of fleets) f.resetStats();
  let managerMemMax = 0;
  let pgMemMax = 0;
  let selfMemMax = 0;
  const until = t0 + windowS * 1000;
  while (performance.now() < until) {
    await sleep(Math.min(SAMPLE_MS, until - performance.now()));
    managerMemMax = Math.max(
      managerMemMax,
      cluster.managers.reduce((s, m) => s + memoryBytes(m.pid), 0),
    );
    pgMemMax = Math.max(
      pgMemMax,
      cluster.managers.flatMap((m) => m.databasePids()).reduce((s, p) => s + memoryBytes(p), 0),
    );
    selfMemMax = Math.max(selfMemMax, process.memoryUsage().rss);
  }
  const cpu1 = await cluster.cpu();
  const self = process.cpuUsage(self0);
  return {
    wallS: (performance.now() - t0) / 1000,
    cpu: {
      managerUser: cpu1.managerUser - cpu0.managerUser,
      managerSystem: cpu1.managerSystem - cpu0.managerSystem,
      postgres: cpu1.postgres - cpu0.postgres,
    },
    selfCpuS: (self.user + self.system) / 1e6,
    managerMemMax,
    pgMemMax,
    selfMemMax,
  };
}

/**
 * Manager CPU while agents only hold their job channels (heartbeats paused, far shorter than
 * the stale window): what an open channel costs, waits turning over every JOB_WAIT_MS included.
 *
 * @param {SyntheticFleet[]} fleets @param {import('../lib/scale-cluster.js').ScaleCluster} cluster
 */
async function measureIdleChannels(fleets, cluster) {
  for (const f of fleets) f.pause();
  try {
    await sleep(PAUSE_SETTLE_MS);
    const waits0 = fleets.reduce((n, f) => n + (f.counts.wait ?? 0), 0);
    const cpu0 = await cluster.cpu();
    const t0 = performance.now();
    await sleep(CHANNEL_WINDOW_S * 1000);
    const cpu1 = await cluster.cpu();
    return {
      wallS: (performance.now() - t0) / 1000,
      channels: fleets.reduce((n, f) => n + f.openChannels, 0),
      managerCpuS: cpu1.managerUser + cpu1.managerSystem - (cpu0.managerUser + cpu0.managerSystem),
      waits: fleets.reduce((n, f) => n + (f.counts.wait ?? 0), 0) - waits0,
    };
  } finally {
    for (const f of fleets) f.resume();
  }
}

/**
 * The report's rows for one run; runs of the largest fleet carry the p99 target.
 *
 * @param {{ agents: number, managers: number, build: string, windowSeconds: number,
 *   enrollPerSecond: number, latencyMs: { p50: number, p99: number, max: number },
 *   errors: Record<string, number>, managerCpuMsPerHeartbeat: number,
 *   generator: { lateSends: number, lateShare: number, lateMs: { p99: number },
 *     queuedMs: { p99: number } },
 *   managerCpuMsPerHeartbeatNet: number, postgresCpuMsPerHeartbeat: number,
 *   managerCpuUsPerChannelSecond: number, managerCpuShareWithoutAgents: number, loadavg1: number,
 *   cpuShareOfOneCore: { manager: number, managerUser: number, managerSystem: number,
 *     postgres: number, loadGenerator: number } }} level
 * @param {boolean} last
 */
export function levelRows(level, last) {
  const size = level.agents;
  const errors = Object.values(level.errors).reduce((a, b) => a + b, 0);
  const who = `${size} agents, ${level.managers} manager${level.managers > 1 ? 's' : ''}${
    level.build === 'dist' ? '' : ` (${level.build})`
  }`;
  const params = { agents: size, managers: level.managers, build: level.build };
  const c = level.cpuShareOfOneCore;
  return [
    {
      case: `${who}: heartbeat p99 latency (ms)`,
      params: { ...params, windowSeconds: level.windowSeconds },
      mbps: level.latencyMs.p99,
      limitMbps: last ? P99_TARGET_MS : null,
      targetRatio: last ? 1 : null,
      lowerIsBetter: true,
      note: `ms, not MB/s, written to answered; p50 ${level.latencyMs.p50}, max ${level.latencyMs.max}; errors ${errors}; load ${level.loadavg1}; generator: ${level.generator.lateSends} late sends (> ${LATE_SEND_MS} ms, ${level.generator.lateShare} of them), late p99 ${level.generator.lateMs.p99} ms, queued p99 ${level.generator.queuedMs.p99} ms`,
    },
    {
      case: `${who}: manager CPU per heartbeat (ms)`,
      params,
      mbps: level.managerCpuMsPerHeartbeat,
      limitMbps: CPU_PER_HEARTBEAT_TARGET_MS,
      targetRatio: 1,
      lowerIsBetter: true,
      note: `CPU ms, all manager CPU over heartbeats (${level.managerCpuMsPerHeartbeatNet} without idle channels); manager ${c.manager} of one core (user ${c.managerUser}, system ${c.managerSystem})`,
    },
    {
      case: `${who}: PostgreSQL CPU per heartbeat (ms)`,
      params,
      mbps: level.postgresCpuMsPerHeartbeat,
      limitMbps: null,
      note: `CPU ms; PostgreSQL ${c.postgres}, load generator ${c.loadGenerator} of one core`,
    },
    {
      case: `${who}: manager CPU per held job channel-second (µs)`,
      params,
      mbps: level.managerCpuUsPerChannelSecond,
      limitMbps: null,
      note: `CPU µs, heartbeats paused, less the manager's cost without agents (${level.managerCpuShareWithoutAgents} of one core)`,
    },
    {
      case: `${who}: enrollment (agents/s)`,
      params,
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
