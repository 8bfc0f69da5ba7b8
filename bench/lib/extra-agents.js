import { managerApi } from './freeloader-lan.js';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnFreeLoader } from './freeloader.js';

const AGENT_PORT = 7500;

/**
 * @typedef {object} AgentInfo
 * @property {string} id
 * @property {string} name
 * @property {string} state
 * @property {{ diskReadRate: number | null, downloadRate: number | null, uploadRate: number | null }} [diagnostics]
 */

/**
 * Enroll and start agents on more hosts of a running FreeLoader LAN — donors inducted one at a
 * time (seed Fig. 8) or the client's own agent for asymmetric striping (seed Fig. 9). Resolves
 * once the manager sees them live and, with `diagnostics`, once they have reported their
 * join-time probe. Each agent's state directory is `<workDir>/agent-<host>`.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {import('./freeloader-lan.js').FreeLoaderLan} fl
 * @param {import('./testbed.js').LanHost[]} hosts
 * @param {{ workDir: string, quota?: string, diagnostics?: boolean }} opts
 * @returns {Promise<Array<AgentInfo & { dir: string }>>} in `hosts` order
 * @example const [host] = await addAgents(tb, fl, [tb.client], { workDir: work });
 */
export async function addAgents(tb, fl, hosts, opts) {
  const token =
    (await fl.cli(['token', 'create', '--uses', String(hosts.length)])).stdout
      .trim()
      .split('\n')
      .pop() ?? '';
  const dirs = hosts.map((h) => join(opts.workDir, `agent-${h.name}`));
  hosts.forEach((h, i) =>
    spawnFreeLoader(
      h,
      [
        'agent',
        '--manager',
        fl.url,
        '--token',
        token,
        '--dir',
        /** @type {string} */ (dirs[i]),
        '--quota',
        opts.quota ?? '4GiB',
        '--listen',
        `${h.ip}:${AGENT_PORT}`,
        '--advertise',
        `http://${h.ip}:${AGENT_PORT}`,
        '--name',
        h.name,
      ],
      { home: join(opts.workDir, `agent-home-${h.name}`), logDir: opts.workDir },
    ),
  );
  const names = new Set(hosts.map((h) => h.name));
  const deadline = Date.now() + 90_000;
  for (;;) {
    const agents = (await listAgents(tb, fl)).filter((a) => names.has(a.name));
    const ready = agents.filter(
      (a) => a.state === 'live' && (!opts.diagnostics || a.diagnostics !== undefined),
    );
    if (ready.length === hosts.length) {
      return hosts.map((h, i) => ({
        .../** @type {AgentInfo} */ (ready.find((a) => a.name === h.name)),
        dir: /** @type {string} */ (dirs[i]),
      }));
    }
    if (Date.now() > deadline) {
      throw new Error(`agents on ${[...names].join(', ')} not live (and probed) after 90 s`);
    }
    await sleep(300);
  }
}

/**
 * `GET /api/v1/agents` from the client with the admin CLI's session.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {import('./freeloader-lan.js').FreeLoaderLan} fl
 * @returns {Promise<AgentInfo[]>}
 */
export async function listAgents(tb, fl) {
  return /** @type {AgentInfo[]} */ (await managerGet(tb, fl, '/agents'));
}

/**
 * GET an /api/v1 path from the client with the admin CLI's session; the parsed JSON.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {import('./freeloader-lan.js').FreeLoaderLan} fl
 * @param {string} path e.g. '/rates'
 * @returns {Promise<unknown>}
 */
export async function managerGet(tb, fl, path) {
  return managerApi(tb, fl, path);
}
