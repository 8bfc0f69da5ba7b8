import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exec, spawnLogged } from './processes.js';
import { run } from './sh.js';

/**
 * The built `freeloader` CLI (`npm run build` makes it), started as a user's `freeloader` is:
 * by the launcher npm links (which runs the bundled CLI), or by dist/cli/main.js in a checkout
 * older than the launcher. BENCH_FREELOADER_ROOT names another built checkout to drive instead,
 * so one session can measure an older build with today's benchmark (before/after on the same
 * machine and load), e.g. `BENCH_FREELOADER_ROOT=/work/wt-before node bench/run.js loopback-get`.
 */
export const FREELOADER_CLI = cliOf(
  process.env.BENCH_FREELOADER_ROOT ?? resolve(dirname(fileURLToPath(import.meta.url)), '../..'),
);

/** Subcommands a FreeLoader benchmark run needs. */
export const DATA_PATH_COMMANDS = Object.freeze([
  'manager',
  'agent',
  'token',
  'login',
  'import',
  'get',
]);

/**
 * The CLI of the built checkout at `root` (`BENCH_GET_BEFORE_ROOT`: a before build whose reads
 * alternate with this one's on the same LAN).
 *
 * @param {string} root
 */
export function cliOf(root) {
  const launcher = resolve(root, 'apps/agent/bin/freeloader.js');
  return existsSync(launcher) ? launcher : resolve(root, 'apps/agent/dist/cli/main.js');
}

/**
 * What is missing for FreeLoader runs: the built CLI and its data-path subcommands.
 *
 * @returns {Promise<string[]>} empty when everything is there
 */
export async function missingDataPath() {
  if (!existsSync(FREELOADER_CLI)) return [`${FREELOADER_CLI} (run npm run build)`];
  const help = await run('node', [FREELOADER_CLI, '--help'], { allowFail: true });
  const have = new Set([...help.stdout.matchAll(/^\s{2}(\w[\w-]*)/gm)].map((m) => m[1]));
  return DATA_PATH_COMMANDS.filter((c) => !have.has(c)).map((c) => `freeloader ${c}`);
}

/**
 * Environment for one FreeLoader process: its own FREELOADER_HOME (manager data, CLI session) so
 * runs never touch ~/.freeloader, plus whatever `env` adds (DEAD_AFTER_MS, EMBEDDED_PG_PORT…).
 *
 * @param {string} home
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {NodeJS.ProcessEnv}
 */
export function freeloaderEnv(home, env = {}) {
  // Agents on a benchmark box would yield to each other's load: the governor benchmark turns
  // load-watching back on (FREELOADER_IGNORE_LOAD=0) where it measures exactly that.
  return {
    FREELOADER_IGNORE_LOAD: '1',
    ...process.env,
    FREELOADER_HOME: home,
    LOG_LEVEL: 'warn',
    FREELOADER_SOURCE_ALLOW: BENCH_SOURCE_ALLOW,
    ...env,
  };
}

/**
 * The benchmarks' sources serve from this machine (loopback) or from the testbed's source
 * namespace (10.77.0.0/16, see testbed.js): addresses FreeLoader refuses unless allowed, so
 * every manager and agent a benchmark starts allows exactly these.
 */
export const BENCH_SOURCE_ALLOW = '127.0.0.0/8,::1,localhost,10.77.0.0/16';

/**
 * Start a long-running `freeloader <args>` (manager, agent) in `host`'s namespace, logging to
 * `<logDir>/<host>-<args[0]>.log`; it dies with the testbed.
 *
 * @param {import('./processes.js').Host} host
 * @param {string[]} args e.g. ['manager', '--listen', `${tb.manager.ip}:7400`]
 * @param {{ home: string, logDir: string, env?: NodeJS.ProcessEnv }} opts
 * @example
 *   const mgr = spawnFreeLoader(tb.manager, ['manager', '--listen', `${tb.manager.ip}:7400`],
 *     { home: join(work, 'mgr'), logDir: work });
 *   await waitForPort(tb.client, tb.manager.ip, 7400, { what: 'manager', logPath: mgr.logPath, timeoutMs: 60000 });
 */
export function spawnFreeLoader(host, args, opts) {
  const logPath = join(opts.logDir, `${host.name}-${args[0]}.log`);
  return spawnLogged(host, 'node', [FREELOADER_CLI, ...args], {
    logPath,
    env: freeloaderEnv(opts.home, opts.env),
  });
}

/**
 * Run a short `freeloader <args>` (login, token create, import, get) in `host`'s namespace and
 * collect its output; rejects on a non-zero exit.
 *
 * @param {import('./processes.js').Host} host
 * @param {string[]} args
 * @param {{ home: string, env?: NodeJS.ProcessEnv, timeoutMs?: number, cli?: string }} opts
 *   `cli`: another build's `main.js` (a before/after read on the same LAN), default FREELOADER_CLI
 */
export function runFreeLoader(host, args, opts) {
  return exec(host, 'node', [opts.cli ?? FREELOADER_CLI, ...args], {
    env: freeloaderEnv(opts.home, opts.env),
    timeoutMs: opts.timeoutMs,
  });
}

const GET_SUMMARY = /in ([\d.]+) s, ([\d.]+) MB\/s/;
const GET_PRECISE = /^read time ([\d.]+) s, ([\d.]+) MB\/s$/m;

/**
 * Seconds and MB/s of a `freeloader get`, from its stderr: the `--stats` line when there (4 and 3
 * decimals), else the summary line, whose one-decimal MB/s turned 11.949 into 11.9 and lost a
 * tie with aria2c's 11.913. Throws when neither is there.
 *
 * @param {string} stderr
 * @returns {{ seconds: number, mbps: number }}
 * @example parseGetSummary('1 GiB (…) in 89.86 s, 11.9 MB/s, …\nread time 89.8612 s, 11.949 MB/s') // { seconds: 89.8612, mbps: 11.949 }
 */
export function parseGetSummary(stderr) {
  const m = GET_PRECISE.exec(stderr) ?? GET_SUMMARY.exec(stderr);
  if (!m) throw new Error(`no summary from get: ${stderr}`);
  return { seconds: Number(m[1]), mbps: Number(m[2]) };
}
