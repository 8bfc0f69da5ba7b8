import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HealthResponse } from '@freeloader/protocol';
import { MANAGER_VERSION } from '../version.js';

/** `GET /health`: anyone; answers only when the app (and so its database) is up. */
const health: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/health',
    {
      logLevel: 'warn',
      schema: { tags: ['health'], summary: 'Liveness probe', response: { 200: HealthResponse } },
    },
    async () => ({ ok: true as const, version: MANAGER_VERSION }),
  );
};
export default health;
