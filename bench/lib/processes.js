import { spawn as spawnChild } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { onCleanup } from './cleanup-hooks.js';
import { inNamespace } from './netns.js';
import { run } from './sh.js';

/**
 * Where a command runs: a namespace of the testbed, or the root namespace (loopback only).
 *
 * @typedef {object} Host
 * @property {string} name short role name: d1…dN, cl, src, mgr, or loopback
 * @property {string | null} ns network namespace; null = root namespace
 * @property {string} ip the host's address (127.0.0.1 for loopback)
 * @property {import('./shaping.js').LinkSpec | null} link its shaping (null for loopback)
 */

/** @type {Host} */
export const LOOPBACK = Object.freeze({ name: 'loopback', ns: null, ip: '127.0.0.1', link: null });

/** Children still running; killed by a cleanup hook if the run ends without stopping them. */
const live = new Set();
onCleanup(() => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Run a command in a host's namespace and collect its output.
 *
 * @param {Host} host
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ allowFail?: boolean, timeoutMs?: number, env?: NodeJS.ProcessEnv, cwd?: string }} [opts]
 * @returns {Promise<import('./sh.js').RunResult>}
 * @example
 *   const { stdout } = await exec(tb.client, 'ip', ['-br', 'addr']);
 */
export function exec(host, cmd, args, opts = {}) {
  const [c, a] = inNamespace(host.ns, cmd, args);
  return run(c, a, opts);
}

/**
 * Start a long-running command in a host's namespace. The child is tracked and killed on
 * teardown, SIGINT, SIGTERM or exit; `exited` resolves with its exit code (or signal name).
 *
 * @param {Host} host
 * @param {string} cmd
 * @param {string[]} args
 * @param {import('node:child_process').SpawnOptions} [opts]
 * @returns {{ child: import('node:child_process').ChildProcess, exited: Promise<number | string> }}
 */
export function spawn(host, cmd, args, opts = {}) {
  const [c, a] = inNamespace(host.ns, cmd, args);
  const child = spawnChild(c, a, { stdio: 'ignore', ...opts });
  live.add(child);
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      live.delete(child);
      resolve(code ?? signal ?? -1);
    });
    child.on('error', (e) => {
      live.delete(child);
      resolve(`spawn error: ${e.message}`);
    });
  });
  return { child, exited };
}

/**
 * {@link spawn} with stdout and stderr appended to `logPath` (for daemons: manager, agents, nginx).
 *
 * @param {Host} host
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ logPath: string, env?: NodeJS.ProcessEnv, cwd?: string }} opts
 */
export function spawnLogged(host, cmd, args, opts) {
  const fd = openSync(opts.logPath, 'a');
  try {
    const env = opts.env ? { ...process.env, ...opts.env } : process.env;
    return {
      ...spawn(host, cmd, args, { stdio: ['ignore', fd, fd], env, cwd: opts.cwd }),
      logPath: opts.logPath,
    };
  } finally {
    closeSync(fd);
  }
}

/**
 * Last `lines` lines of a log file, for error messages.
 *
 * @param {string} path
 * @param {number} [lines]
 * @returns {string}
 */
export function tail(path, lines = 20) {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Stop a spawned child: SIGTERM, then SIGKILL after `graceMs`.
 *
 * @param {{ child: import('node:child_process').ChildProcess, exited: Promise<unknown> }} proc
 * @param {number} [graceMs]
 */
export async function stop(proc, graceMs = 3000) {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  const timer = sleep(graceMs).then(() => 'timeout');
  if ((await Promise.race([proc.exited, timer])) === 'timeout') {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
}

/**
 * Wait until something accepts TCP connections on `ip:port`, probed from inside `host`'s
 * namespace (bash's /dev/tcp, so no extra tools). Rejects after `timeoutMs`.
 *
 * @param {Host} host where the probe runs (any host on the LAN, or the server itself)
 * @param {string} ip
 * @param {number} port
 * @param {{ timeoutMs?: number, what?: string, logPath?: string }} [opts]
 * @example
 *   await waitForPort(tb.client, tb.manager.ip, 7400, { what: 'manager', logPath });
 */
export async function waitForPort(host, ip, port, opts = {}) {
  const deadline = Date.now() + (opts.timeoutMs ?? 30000);
  for (;;) {
    const probe = await exec(host, 'bash', ['-c', `exec 3<>/dev/tcp/${ip}/${port}`], {
      allowFail: true,
      // At load 25–35 a probe's bash took over 2 s to start: with a 2 s limit every probe was
      // killed and a listening nginx was reported "not listening" (5 runs in a row, 27 Nov).
      timeoutMs: 15000,
    });
    if (probe.code === 0) return;
    if (Date.now() > deadline) {
      const log = opts.logPath ? `\n--- ${opts.logPath}:\n${tail(opts.logPath)}` : '';
      throw new Error(`${opts.what ?? 'server'} not listening on ${ip}:${port}${log}`);
    }
    await sleep(100);
  }
}
