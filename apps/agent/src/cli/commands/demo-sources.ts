import { parseAllowList, SOURCE_ALLOW_ENV } from '@freeloader/sources';

/** Loopback by address and by name: what the demo cluster's example sources run on. */
const LOOPBACK = ['127.0.0.0/8', '::1', 'localhost'];

/**
 * Environment of the demo cluster's manager and agents: the user's `FREELOADER_SOURCE_ALLOW`
 * plus loopback, so a file served on this machine (`python3 -m http.server`) can be imported.
 * A manager started on its own refuses loopback sources unless an admin allows them.
 *
 * @example demoSourceEnv({}) // → { FREELOADER_SOURCE_ALLOW: '127.0.0.0/8,::1,localhost' }
 */
export function demoSourceEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const own = parseAllowList(env[SOURCE_ALLOW_ENV]);
  return { [SOURCE_ALLOW_ENV]: [...new Set([...own, ...LOOPBACK])].join(',') };
}
