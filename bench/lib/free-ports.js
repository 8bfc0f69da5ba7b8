// Fixed loopback ports that are checked before use. Loopback benchmarks start servers on fixed
// ports (a manager, its embedded PostgreSQL, consecutive agent ports, nginx); one taken by a
// lingering process from a crashed run, or by a client's ephemeral port, used to fail a whole
// run with EADDRINUSE. Ports below the ephemeral range (32768+) keep clients off them; this
// module moves a whole block elsewhere when something still holds one of them.
import { createServer } from 'node:net';

/**
 * Whether a TCP port can be listened on at `host` right now: listen there (as node servers do,
 * without SO_REUSEPORT, so a lingering nginx's reuseport socket counts as taken), then close.
 *
 * @param {number} port
 * @param {string} [host]
 * @returns {Promise<boolean>}
 * @example if (!(await portFree(7790))) console.error('7790 is taken');
 */
export function portFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/**
 * `ports` shifted together by the first of 0, `step`, 2·`step`, … (`tries` shifts in all) at
 * which every one of them is free on `host`; rejects naming the busy ports when none is. The
 * block keeps its shape (agent ports stay consecutive, PostgreSQL stays at manager + 1000).
 * Another process may still take a port between this check and its use: it narrows the window,
 * it does not close it.
 *
 * @param {number[]} ports
 * @param {{ step?: number, tries?: number, host?: string }} [opts]
 * @returns {Promise<number[]>} the chosen ports, in the order given
 * @example
 *   const [web] = await freePortBlock([7790]);
 *   const [mgr, pg, agent1] = await freePortBlock([7780, 8780, 7781]);
 */
export async function freePortBlock(ports, opts = {}) {
  const step = opts.step ?? 50;
  const tries = opts.tries ?? 5;
  /** @type {string[]} */
  const busy = [];
  for (let i = 0; i < tries; i++) {
    const shifted = ports.map((p) => p + i * step);
    if (shifted.some((p) => p < 1 || p > 65535)) break;
    const taken = [];
    for (const p of shifted) if (!(await portFree(p, opts.host))) taken.push(p);
    if (taken.length === 0) return shifted;
    busy.push(taken.join(','));
  }
  throw new Error(
    `no free port block near ${ports.join(',')} on ${opts.host ?? '127.0.0.1'} ` +
      `(step ${step}); busy: ${busy.join(' | ')}`,
  );
}
