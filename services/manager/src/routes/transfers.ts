import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ErrorBodySchema as E, TransferQuery, TransferView } from '@freeloader/protocol';
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
        response: { 200: Type.Array(TransferView), 400: E, 401: E, 500: E },
      },
    },
    async (req) => app.jobsRepo.transfers(req.query),
  );
};
export default transfers;
