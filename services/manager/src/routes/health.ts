import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBodySchema as E, FreeLoaderError, HealthResponse } from '@freeloader/protocol';
import { pingDatabase } from '../db/pool.js';
import { MANAGER_VERSION } from '../version.js';

/** `GET /health`: anyone; 200 only when the manager can reach its database. */
const health: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/health',
    {
      logLevel: 'warn',
      schema: {
        tags: ['health'],
        summary: 'Liveness probe',
        response: { 200: HealthResponse, 503: E },
      },
    },
    async () => {
      try {
        await pingDatabase(app.pg);
      } catch (e) {
        throw new FreeLoaderError(
          'UNAVAILABLE',
          'the manager cannot reach its database',
          undefined,
          e,
        );
      }
      return { ok: true as const, version: MANAGER_VERSION };
    },
  );
};
export default health;
