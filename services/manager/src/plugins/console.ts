import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import fp from 'fastify-plugin';

/**
 * The console the repository builds (`apps/console/dist`), found relative to this file: it is
 * `services/manager/{src,dist}/plugins/console.*` in the workspace, so four levels up is the root.
 */
export const BUILT_CONSOLE_DIR = fileURLToPath(
  new URL('../../../../apps/console/dist', import.meta.url),
);

/**
 * Where the console is served from: CONSOLE_DIR when set, else the built console when it
 * exists, else nowhere (the manager then serves only the API).
 *
 * @example consoleRoot(undefined) // '/work/main/apps/console/dist' after `npm run build`
 */
export function consoleRoot(configured: string | undefined, builtDir = BUILT_CONSOLE_DIR) {
  if (configured) return configured;
  return existsSync(join(builtDir, 'index.html')) ? builtDir : null;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The directory the console is served from, or null when there is none. */
    consoleRoot: string | null;
  }
}

/**
 * Serve the console at `/` (see {@link consoleRoot}). Unknown non-API paths fall back to its
 * index.html (client-side routing); see the app's not-found handler.
 */
export default fp(
  async (app) => {
    const root = consoleRoot(app.config.consoleDir);
    app.decorate('consoleRoot', root);
    if (!root) return;
    await app.register(fastifyStatic, { root, prefix: '/', wildcard: false, index: 'index.html' });
  },
  { name: 'console', dependencies: ['config'] },
);
