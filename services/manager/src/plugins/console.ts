import fastifyStatic from '@fastify/static';
import fp from 'fastify-plugin';

/**
 * Serve the built console from CONSOLE_DIR at `/`. Unknown non-API paths fall back to its
 * index.html (client-side routing); see the app's not-found handler.
 */
export default fp(
  async (app) => {
    const root = app.config.consoleDir;
    if (!root) return;
    await app.register(fastifyStatic, { root, prefix: '/', wildcard: false, index: 'index.html' });
  },
  { name: 'console', dependencies: ['config'] },
);
