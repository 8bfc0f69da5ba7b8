import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AGENT_NODE_OPTIONS } from '../../apps/agent/dist/cli/agent-node-flags.js';
import { runFreeLoader, spawnFreeLoader } from './freeloader.js';
import { exec, waitForPort } from './processes.js';

const MANAGER_PORT = 7400;
const AGENT_PORT = 7500;
/** How long the agents of a LAN may take to start and be seen live (milliseconds). */
const LIVE_AGENTS_TIMEOUT_MS = 300_000;

/**
 * @typedef {object} FreeLoaderLan
 * @property {string} url the manager's URL (on the emulated LAN)
 * @property {string} cliHome FREELOADER_HOME of the signed-in admin CLI on the client
 * @property {string} caPath the manager's CA certificate (PEM), for curl --cacert
 * @property {string} managerLog
 * @property {string[]} agentLogs one per donor, in tb.donors order
 * @property {Array<{ child: import('node:child_process').ChildProcess, exited: Promise<number | string> }>} agents
 *   the agent processes, in tb.donors order (to freeze or kill one mid-read)
 * @property {(args: string[], timeoutMs?: number, cliPath?: string) => Promise<import('./sh.js').RunResult>} cli
 *   run `freeloader <args> --manager <url>` as the admin on the client host (`cliPath`: another
 *   build's CLI, for before/after reads on the same LAN)
 */

/**
 * Bring FreeLoader up on a testbed: the manager (embedded PostgreSQL) in the manager namespace,
 * the admin CLI signed in on the client, and one agent per donor enrolled with a join token and
 * advertising its LAN address; resolves once the manager sees every agent live. Everything it
 * starts dies with `tb.teardown()`. Logs: `<workDir>/<host>-<command>.log`.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {{ workDir: string, quota?: string, env?: NodeJS.ProcessEnv }} opts
 * @returns {Promise<FreeLoaderLan>}
 * @example
 *   const fl = await startFreeLoaderLan(tb, { workDir: ctx.workDir('fl') });
 *   await fl.cli(['import', source.url(ds.name), '--width', '4', '--wait']);
 */
export async function startFreeLoaderLan(tb, opts) {
  const work = opts.workDir;
  const env = opts.env ?? {};
  // Beyond loopback the manager speaks HTTPS only, with its own CA (as a site runs it): the
  // CLI pins the CA by its fingerprint at login, agents by the one their join token carries.
  const url = `https://${tb.manager.ip}:${MANAGER_PORT}`;
  const mgrHome = join(work, 'manager-home');
  await mkdir(mgrHome, { recursive: true });
  const mgr = spawnFreeLoader(
    tb.manager,
    ['manager', '--listen', `${tb.manager.ip}:${MANAGER_PORT}`, '--home', mgrHome],
    {
      home: mgrHome,
      logDir: work,
      env,
    },
  );
  await waitForPort(tb.client, tb.manager.ip, MANAGER_PORT, {
    what: 'manager',
    logPath: mgr.logPath,
    timeoutMs: 120000,
  });

  const caPath = join(mgrHome, 'manager', 'tls', 'ca.pem');
  const caDer = new X509Certificate(readFileSync(caPath, 'utf8')).raw;
  const fingerprint = `sha256:${createHash('sha256').update(caDer).digest('hex')}`;
  const cliHome = join(work, 'cli-home');
  const cli = (
    /** @type {string[]} */ args,
    timeoutMs = 0,
    /** @type {string | undefined} */ cliPath = undefined,
  ) =>
    runFreeLoader(tb.client, [...args, '--manager', url], {
      home: cliHome,
      env,
      timeoutMs,
      ...(cliPath ? { cli: cliPath } : {}),
    });
  const password = readFileSync(join(mgrHome, 'manager', 'admin-password'), 'utf8').trim();
  await runFreeLoader(tb.client, ['login', '--manager', url], {
    home: cliHome,
    env: { ...env, FREELOADER_PASSWORD: password, FREELOADER_CA_FINGERPRINT: fingerprint },
  });
  const token =
    (await cli(['token', 'create', '--uses', String(tb.donors.length)])).stdout
      .trim()
      .split('\n')
      .pop() ?? '';

  // Donors run as `freeloader cluster` starts them: with the agent's node flags (4 MiB
  // semi-spaces). Without them a benchmark donor's young generation grew to V8's 32 MiB and the
  // repair benchmark's RSS row measured a launcher difference, not the daemon (docs/repair.md).
  // NODE_OPTIONS, not argv: V8 flags must be set at process start, and this is the way a user
  // running `freeloader agent` by hand sets them too (docs/memory.md).
  const agentEnv = {
    ...env,
    NODE_OPTIONS: [process.env.NODE_OPTIONS, env.NODE_OPTIONS, AGENT_NODE_OPTIONS]
      .filter(Boolean)
      .join(' '),
  };
  const agents = tb.donors.map((d) =>
    spawnFreeLoader(
      d,
      [
        'agent',
        '--manager',
        url,
        '--token',
        token,
        '--dir',
        join(work, `agent-${d.name}`),
        '--quota',
        opts.quota ?? '4GiB',
        '--listen',
        `${d.ip}:${AGENT_PORT}`,
        '--advertise',
        `http://${d.ip}:${AGENT_PORT}`,
        '--name',
        d.name,
      ],
      { home: join(work, `agent-home-${d.name}`), logDir: work, env: agentEnv },
    ),
  );
  await waitForLiveAgents(
    tb,
    url,
    caPath,
    join(cliHome, 'cli-session.json'),
    tb.donors.length,
    agents.map((a) => a.logPath),
  );
  return {
    url,
    cliHome,
    caPath,
    managerLog: mgr.logPath,
    agentLogs: agents.map((a) => a.logPath),
    agents,
    cli,
  };
}

/**
 * Poll `GET /api/v1/agents` (from the client, with the CLI's session) until `n` agents are live.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {string} url
 * @param {string} caPath the manager's CA certificate (PEM), for curl
 * @param {string} sessionFile
 * @param {number} n
 * @param {string[]} logs shown when it times out
 */
async function waitForLiveAgents(tb, url, caPath, sessionFile, n, logs) {
  const { token } = JSON.parse(readFileSync(sessionFile, 'utf8'));
  // Generous: on a shared 2-core box at load 20+ an agent took 70 s just to start node.
  const deadline = Date.now() + LIVE_AGENTS_TIMEOUT_MS;
  let live = 0;
  while (Date.now() < deadline) {
    const res = await exec(
      tb.client,
      'curl',
      ['-sf', '--cacert', caPath, '-H', `Authorization: Bearer ${token}`, `${url}/api/v1/agents`],
      { allowFail: true },
    );
    if (res.code === 0) {
      const body = JSON.parse(res.stdout);
      const list = Array.isArray(body) ? body : (body.agents ?? body.items ?? []);
      live = list.filter((/** @type {{ state: string }} */ a) => a.state === 'live').length;
      if (live >= n) return;
    }
    await sleep(250);
  }
  throw new Error(
    `only ${live} of ${n} agents live after ${LIVE_AGENTS_TIMEOUT_MS / 1000} s; logs: ${logs.join(', ')}`,
  );
}

/**
 * Import `uri` as `name` striped greedy round-robin over `width` donors, and wait until ready.
 * Pinned, not `auto`: once reads have reported rates, `auto` goes predictive, and the
 * stripe-width and mount figures measure the read path, not rate predictions (seed Fig. 7).
 *
 * @param {FreeLoaderLan} fl
 * @param {string} uri
 * @param {string} name
 * @param {number} width
 * @param {string[]} [extra] more import flags (e.g. --no-encrypt)
 * @example await importRoundRobin(fl, source.url(ds.name), 'bench/w8', 8);
 */
export async function importRoundRobin(fl, uri, name, width, extra = []) {
  const args = ['import', uri, '--name', name, '--width', String(width), ...extra];
  await fl.cli([...args, '--policy', 'round-robin', '--wait'], 600_000);
}

/**
 * GET a manager API path as the signed-in admin, from the client host (curl, the manager's CA
 * pinned); the parsed JSON answer.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {FreeLoaderLan} fl
 * @param {string} path e.g. '/patch-sessions'
 * @returns {Promise<any>}
 * @example const rates = await managerApi(tb, fl, '/rates');
 */
export async function managerApi(tb, fl, path) {
  const { token } = JSON.parse(readFileSync(join(fl.cliHome, 'cli-session.json'), 'utf8'));
  const res = await exec(tb.client, 'curl', [
    '-sf',
    '--cacert',
    fl.caPath,
    '-H',
    `Authorization: Bearer ${token}`,
    `${fl.url}/api/v1${path}`,
  ]);
  return JSON.parse(res.stdout);
}
