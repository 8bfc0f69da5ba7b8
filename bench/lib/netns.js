import { run, runSync } from './sh.js';

/** Every namespace this testbed creates starts with this, so `cleanup.js` can find leftovers. */
export const NS_PREFIX = 'fl-';

/**
 * Argument vector that runs `cmd args` inside namespace `ns` (`ip netns exec` execs the command,
 * so the child's pid is the command's own pid and signals reach it directly).
 * A null namespace means the root namespace (loopback-only benchmarks).
 *
 * @param {string | null} ns
 * @param {string} cmd
 * @param {string[]} args
 * @returns {[string, string[]]}
 */
export function inNamespace(ns, cmd, args) {
  return ns === null ? [cmd, args] : ['ip', ['netns', 'exec', ns, cmd, ...args]];
}

/**
 * Names of existing network namespaces starting with `prefix`.
 *
 * @param {string} [prefix]
 * @returns {string[]}
 */
export function listNamespaces(prefix = NS_PREFIX) {
  return runSync('ip', ['netns', 'list'], { allowFail: true })
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name.startsWith(prefix));
}

/**
 * Create a namespace with its loopback up.
 *
 * @param {string} ns
 */
export async function addNamespace(ns) {
  await run('ip', ['netns', 'add', ns]);
  await run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
}

/**
 * Pids of every process living in namespace `ns`.
 *
 * @param {string} ns
 * @returns {number[]}
 */
export function namespacePids(ns) {
  return runSync('ip', ['netns', 'pids', ns], { allowFail: true })
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

/**
 * Kill every process inside the given namespaces (TERM, then KILL after `graceMs`) and delete the
 * namespaces; their veth ends, and so the links and bridge, go with them. Synchronous so it also
 * works from signal and exit handlers. Never throws: teardown must get as far as it can.
 *
 * @param {string[]} namespaces
 * @param {number} [graceMs]
 * @returns {string[]} namespaces that could not be deleted
 */
export function destroyNamespaces(namespaces, graceMs = 2000) {
  const signalAll = (/** @type {NodeJS.Signals} */ sig) => {
    let alive = 0;
    for (const ns of namespaces) {
      for (const pid of namespacePids(ns)) {
        try {
          process.kill(pid, sig);
          alive++;
        } catch {
          // already gone
        }
      }
    }
    return alive;
  };
  if (signalAll('SIGTERM') > 0) {
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && namespaces.some((ns) => namespacePids(ns).length > 0)) {
      runSync('sleep', ['0.1'], { allowFail: true });
    }
    signalAll('SIGKILL');
  }
  const failed = [];
  for (const ns of namespaces) {
    runSync('ip', ['netns', 'del', ns], { allowFail: true });
    if (listNamespaces(ns).includes(ns)) failed.push(ns);
  }
  return failed;
}
