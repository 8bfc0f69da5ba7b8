import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { descendants } from './process-tree.js';

/** The manager package, whose `dist` (or another build folder beside it) holds start.js. */
const MANAGER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../services/manager');

/** Prefix of the line the manager process prints once it listens. */
const READY = 'manager-ready ';
/** Prefix of the line with the steps of its stop, printed before it exits. */
const STOPPED = 'manager-stopped ';
/** Prefix of the lines a stop still running prints every few seconds. */
const STOPPING = 'manager-stopping ';

/**
 * A manager in its own process (its CPU and memory are measured apart from the load generator):
 * `startManager` on a fresh home with embedded PostgreSQL, listening on an ephemeral port.
 * `cpuProfDir` runs it under `node --cpu-prof` (the profile is written when it stops). `build`
 * names another build folder of services/manager (e.g. a copy of `dist` made before a change,
 * for A/B runs); `env` adds variables (`DATABASE_URL` for a shared server, whose processes are
 * then not this manager's descendants).
 *
 * @typedef {object} ManagerProcess
 * @property {string} url
 * @property {number} pid
 * @property {string} adminPassword
 * @property {() => number[]} databasePids the embedded PostgreSQL's processes (postmaster first)
 * @property {() => Promise<void>} stop
 *
 * @param {{ home: string, env?: NodeJS.ProcessEnv, cpuProfDir?: string, build?: string,
 *   log: (m: string) => void }} opts
 * @returns {Promise<ManagerProcess>}
 */
export async function startManagerProcess(opts) {
  mkdirSync(opts.home, { recursive: true, mode: 0o711 });
  const start = join(MANAGER_DIR, opts.build ?? 'dist', 'start.js');
  const script = `
    const { startManager } = await import(${JSON.stringify(start)});
    const m = await startManager({ home: ${JSON.stringify(opts.home)}, host: '127.0.0.1', port: 0,
      logLevel: 'warn' });
    process.stdout.write(${JSON.stringify(READY)} + JSON.stringify({ url: m.url, adminPassword: m.adminPassword }) + '\\n');
    const stop = () => {
      const signalAt = performance.now();
      // A stop that hangs says where, every few seconds, until it is killed.
      setInterval(() => process.stdout.write(${JSON.stringify(STOPPING)} + JSON.stringify(m.app.closeSteps?.summary() ?? null) + ' pending ' + JSON.stringify(m.app.closeSteps?.pending() ?? null) + '\\n'), 5_000).unref();
      return m.close().then(() => {
      // Each step of the stop (builds before close-steps have none).
      const steps = { ...(m.app.closeSteps?.summary() ?? {}), signalToDoneMs: Math.round(performance.now() - signalAt) };
      process.stdout.write(${JSON.stringify(STOPPED)} + JSON.stringify(steps) + '\\n');
      process.exit(0);
    }, () => process.exit(1));
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);`;
  const args = [
    ...(opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`] : []),
    '--input-type=module',
    '-e',
    script,
  ];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-8_000);
    if (process.env.MANAGER_SCALE_DEBUG) process.stderr.write(d);
  });
  let out = '';
  const first = await new Promise((resolveLine, reject) => {
    // Its log lines (warnings) share stdout: the answer is the line with the marker.
    child.stdout.on('data', (d) => {
      out = (out + d).slice(-64_000);
      const line = out.split('\n').find((l) => l.startsWith(READY));
      if (line) resolveLine(line.slice(READY.length));
    });
    child.once('exit', (code) => reject(new Error(`manager exited ${code}: ${stderr}`)));
  });
  const { url, adminPassword } = JSON.parse(/** @type {string} */ (first));
  const pid = /** @type {number} */ (child.pid);
  opts.log(`manager ${url} (pid ${pid}, ${opts.build ?? 'dist'}), home ${opts.home}`);
  return {
    url,
    pid,
    adminPassword,
    databasePids: () => descendants(pid).filter((p) => p !== pid),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      // Its embedded PostgreSQL (postmaster first), stopped by hand if the manager must be killed.
      const [postmaster] = descendants(pid).filter((p) => p !== pid);
      const t0 = performance.now();
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 60_000))]);
      const seconds = ((performance.now() - t0) / 1000).toFixed(1);
      if (child.exitCode === null) {
        const where = out
          .split('\n')
          .filter((l) => l.startsWith(STOPPING) || /"level":(40|50)/.test(l));
        opts.log(
          `manager pid ${pid} still running ${seconds} s after SIGTERM: killed; ${where.slice(-6).join('\n')}`,
        );
        child.kill('SIGKILL');
        // A killed manager leaves its PostgreSQL running under PID 1: a fast shutdown of it.
        try {
          if (postmaster !== undefined) process.kill(postmaster, 'SIGINT');
        } catch {
          // gone already
        }
      } else {
        // Issue 16: a manager holding thousands of job channels must stop in seconds.
        const steps = out
          .split('\n')
          .find((l) => l.startsWith(STOPPED))
          ?.slice(STOPPED.length);
        opts.log(`manager pid ${pid} stopped in ${seconds} s after SIGTERM; steps ${steps}`);
      }
    },
  };
}

/** Where `--cpu-prof` profiles of the manager go, under a benchmark's work dir. @param {string} work */
export const profileDir = (work) => join(work, 'cpu-prof');
