import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onCleanup } from './cleanup-hooks.js';
import { addNamespace, destroyNamespaces, NS_PREFIX } from './netns.js';
import {
  bridgeSkipsNetfilter,
  netemAvailable,
  shapeDevice,
  switchSysctlCommand,
} from './shaping.js';
import { run } from './sh.js';

// The plug-in point for FreeLoader runs: everything a benchmark needs to place processes on the
// LAN (commands, daemons with logs and env, port waits) comes from this one module.
export { exec, spawn, spawnLogged, stop, tail, waitForPort, LOOPBACK } from './processes.js';
export { FREELOADER_CLI, missingDataPath, runFreeLoader, spawnFreeLoader } from './freeloader.js';
export { startFreeLoaderLan } from './freeloader-lan.js';
export { measureGoodput } from './goodput.js';
export { startNginx } from './nginx.js';

/**
 * Default access links (see bench/README.md): donors are 100 Mbit/s workstations, the client a
 * 1 Gbit/s workstation, the source a WAN server, the manager unshaped (control traffic only; it
 * doubles as the fast peer that measures the client's link).
 *
 * @type {Record<'donor' | 'client' | 'source' | 'manager', import('./shaping.js').LinkSpec>}
 */
export const DEFAULT_LINKS = Object.freeze({
  donor: { rateMbit: 100 },
  client: { rateMbit: 1000 },
  source: { rateMbit: 50, delayMs: 20 },
  manager: { rateMbit: null },
});

/**
 * @typedef {import('./processes.js').Host & { role: 'donor' | 'client' | 'source' | 'manager' }} LanHost
 */

/**
 * @typedef {object} Testbed
 * @property {string} id run id, part of every namespace name (`fl-<id>-d1`)
 * @property {LanHost[]} hosts every host (not the switch)
 * @property {LanHost[]} donors d1…dN
 * @property {LanHost} client
 * @property {LanHost} source
 * @property {LanHost} manager
 * @property {string} switchNs namespace holding the bridge
 * @property {boolean} netem whether delays are really emulated on this kernel
 * @property {boolean} bridgeNoNetfilter whether bridged frames skip netfilter (as on a real switch)
 * @property {(host: LanHost, spec: import('./shaping.js').LinkSpec) => Promise<void>} shape reshape a host's link (both directions)
 * @property {() => void} teardown kill every process in our namespaces and delete them (idempotent)
 */

/**
 * Build an emulated LAN: one namespace per host, each joined by a veth pair to a bridge in a
 * switch namespace, addresses from 10.77.0.0/16, every link shaped in both directions. Nothing
 * is attached to the root namespace. The testbed is torn down on teardown(), on SIGINT/SIGTERM
 * and at exit, whichever comes first; a crash leaves at most namespaces `bench/cleanup.js` removes.
 *
 * @param {object} [opts]
 * @param {number} [opts.donors] number of donor hosts (default 4)
 * @param {Partial<typeof DEFAULT_LINKS>} [opts.links] per-role link specs (merged over defaults)
 * @param {Record<string, import('./shaping.js').LinkSpec>} [opts.perHost] per-host overrides, by name (`d3`)
 * @param {(msg: string) => void} [opts.log]
 * @returns {Promise<Testbed>}
 * @example
 *   const tb = await createTestbed({ donors: 8 });
 *   try {
 *     const { stdout } = await exec(tb.client, 'curl', ['-s', `http://${tb.donors[0].ip}:8080/`]);
 *   } finally {
 *     tb.teardown();
 *   }
 */
export async function createTestbed(opts = {}) {
  const donors = opts.donors ?? 4;
  if (donors < 1 || donors > 250) throw new Error(`donors must be 1..250, got ${donors}`);
  const links = { ...DEFAULT_LINKS, ...opts.links };
  const id = randomBytes(2).toString('hex');
  const nsName = (/** @type {string} */ name) => `${NS_PREFIX}${id}-${name}`;
  const switchNs = nsName('sw');
  /** @type {LanHost[]} */
  const hosts = [
    mkHost('mgr', 'manager', '10.77.0.2'),
    mkHost('src', 'source', '10.77.0.3'),
    mkHost('cl', 'client', '10.77.0.10'),
    ...Array.from({ length: donors }, (_, i) => mkHost(`d${i + 1}`, 'donor', `10.77.1.${i + 1}`)),
  ];
  const namespaces = [switchNs, ...hosts.map((h) => /** @type {string} */ (h.ns))];
  // Marker for cleanup.js: a live owner means "not a leftover".
  const marker = join(tmpdir(), `fl-testbed-${id}.json`);
  writeFileSync(marker, JSON.stringify({ pid: process.pid, namespaces }));
  let torn = false;
  const teardown = () => {
    if (torn) return;
    torn = true;
    const failed = destroyNamespaces(namespaces);
    if (failed.length) console.error(`teardown: could not delete ${failed.join(', ')}`);
    rmSync(marker, { force: true });
    forget();
  };
  const forget = onCleanup(teardown);

  try {
    await addNamespace(switchNs);
    await run('ip', ['-n', switchNs, 'link', 'add', 'br0', 'type', 'bridge']);
    await run('ip', ['-n', switchNs, 'link', 'set', 'br0', 'up']);
    const bridgeNoNetfilter = bridgeSkipsNetfilter();
    if (bridgeNoNetfilter) await run('ip', switchSysctlCommand(switchNs));
    const netem = await netemAvailable(switchNs);
    if (!netem) opts.log?.('testbed: kernel has no sch_netem; link delays are NOT emulated');
    const shape = async (
      /** @type {LanHost} */ host,
      /** @type {import('./shaping.js').LinkSpec} */ spec,
    ) => {
      host.link = spec;
      await shapeDevice(/** @type {string} */ (host.ns), 'eth0', spec, netem);
      await shapeDevice(switchNs, `p-${host.name}`, spec, netem);
    };
    await Promise.all(hosts.map((h) => plug(h, switchNs)));
    await Promise.all(
      hosts.map((h) => shape(h, /** @type {import('./shaping.js').LinkSpec} */ (h.link))),
    );
    opts.log?.(
      `testbed ${id}: ${hosts.length} hosts on ${switchNs} (netem ${netem ? 'on' : 'off'}, ` +
        `bridge netfilter ${bridgeNoNetfilter ? 'off' : 'on'})`,
    );
    return {
      id,
      hosts,
      donors: hosts.filter((h) => h.role === 'donor'),
      client: /** @type {LanHost} */ (hosts.find((h) => h.role === 'client')),
      source: /** @type {LanHost} */ (hosts.find((h) => h.role === 'source')),
      manager: /** @type {LanHost} */ (hosts.find((h) => h.role === 'manager')),
      switchNs,
      netem,
      bridgeNoNetfilter,
      shape,
      teardown,
    };
  } catch (e) {
    teardown();
    throw e;
  }

  /**
   * @param {string} name
   * @param {LanHost['role']} role
   * @param {string} ip
   * @returns {LanHost}
   */
  function mkHost(name, role, ip) {
    const link = { ...links[role], ...opts.perHost?.[name] };
    return { name, role, ns: nsName(name), ip, link };
  }
}

/**
 * Create a host's namespace and its veth pair: `eth0` inside the host, `p-<name>` on the bridge.
 * The pair is created inside the switch namespace with its peer sent straight to the host, so
 * neither end ever appears in the root namespace.
 *
 * @param {LanHost} host
 * @param {string} switchNs
 */
async function plug(host, switchNs) {
  const ns = /** @type {string} */ (host.ns);
  const port = `p-${host.name}`;
  await addNamespace(ns);
  await run('ip', [
    '-n',
    switchNs,
    'link',
    'add',
    port,
    'type',
    'veth',
    'peer',
    'name',
    'eth0',
    'netns',
    ns,
  ]);
  await run('ip', ['-n', switchNs, 'link', 'set', port, 'master', 'br0', 'up']);
  await run('ip', ['-n', ns, 'addr', 'add', `${host.ip}/16`, 'dev', 'eth0']);
  await run('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
}
