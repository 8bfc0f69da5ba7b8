import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBodySchema as E, TransferList, TransferQuery } from '@freeloader/protocol';
import { requireUser } from '../auth/guards.js';

/** Jobs as progress rows, most recently active first. */
const transfers: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/transfers',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['transfers'],
        summary: 'Transfers (jobs) with progress',
        querystring: TransferQuery,
        response: { 200: TransferList, 400: E, 401: E },
      },
    },
    async (req) => ({ transfers: await app.jobsRepo.transfers(req.query) }),
  );
};
export default transfers;
