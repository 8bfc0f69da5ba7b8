import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePortBlock } from './free-ports.js';
import { FREELOADER_CLI, freeloaderEnv, runFreeLoader } from './freeloader.js';
import { LOOPBACK } from './processes.js';

/**
 * @typedef {object} LoopbackCluster
 * @property {string} url manager URL
 * @property {string} home FREELOADER_HOME (the CLI signs in as admin from it)
 * @property {(args: string[], timeoutMs?: number) => Promise<import('./sh.js').RunResult>} cli
 * @property {() => number[]} agentPids pids of the agent processes (for RSS sampling)
 * @property {{ manager: number, pg: number, agents: number[] }} ports the ports it listens on
 * @property {() => Promise<void>} stop
 */

/**
 * `freeloader cluster` on loopback (no namespaces, no shaping): manager + `agents` donors.
 * `port` (the manager), `port + 1000` (its embedded PostgreSQL) and `agentBasePort` … + agents − 1
 * are where it starts looking: when one is taken, the whole block moves by 50 (see
 * {@link freePortBlock}); the ports used are logged and returned.
 *
 * @param {{ home: string, agents: number, quota: string, port: number, agentBasePort: number,
 *   log?: (msg: string) => void }} opts
 * @returns {Promise<LoopbackCluster>}
 * @example const c = await startLoopbackCluster({ home, agents: 4, quota: '2GiB', port: 7700, agentBasePort: 7711 });
 */
export async function startLoopbackCluster(opts) {
  const wanted = Array.from({ length: opts.agents }, (_, i) => opts.agentBasePort + i);
  const [port, pgPort, ...agentPorts] = await freePortBlock([
    opts.port,
    opts.port + 1000,
    ...wanted,
  ]);
  const ports = {
    manager: /** @type {number} */ (port),
    pg: /** @type {number} */ (pgPort),
    agents: agentPorts,
  };
  const log = opts.log ?? ((/** @type {string} */ msg) => console.error(`[bench] ${msg}`));
  const moved =
    ports.manager === opts.port ? '' : ` (moved: a port of the ${opts.port} block is busy)`;
  log(`loopback cluster on manager ${port}, PostgreSQL ${pgPort}, agents ${agentPorts}${moved}`);
  const child = spawn(
    'node',
    [
      FREELOADER_CLI,
      'cluster',
      '--agents',
      String(opts.agents),
      '--quota',
      opts.quota,
      '--port',
      String(ports.manager),
      '--agent-base-port',
      String(agentPorts[0] ?? 0),
      '--home',
      opts.home,
    ],
    {
      // Its own embedded PostgreSQL port, so it never meets another local cluster's.
      env: freeloaderEnv(opts.home, { EMBEDDED_PG_PORT: String(ports.pg) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  child.stderr.on('data', (b) => (out += b));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cluster not up in 90 s:\n${out}`)), 90_000);
    const check = () => {
      if (out.includes('cluster is up')) {
        clearTimeout(timer);
        resolve(undefined);
      }
    };
    child.stdout.on('data', check);
    child.on('exit', (code) => reject(new Error(`cluster exited (${code}):\n${out}`)));
  });
  const url = `http://127.0.0.1:${ports.manager}`;
  return {
    url,
    home: opts.home,
    ports,
    cli: (args, timeoutMs = 0) =>
      runFreeLoader(LOOPBACK, [...args, '--manager', url], { home: opts.home, timeoutMs }),
    agentPids: () => agentPids(opts.home),
    stop: async () => {
      child.kill('SIGINT');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** @param {string} home @returns {number[]} */
function agentPids(home) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(join('/proc', entry, 'cmdline'), 'utf8').split('\0');
      if (cmd.includes('agent') && cmd.some((a) => a.startsWith(join(home, 'cluster'))))
        pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}
