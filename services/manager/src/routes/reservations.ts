import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorBodySchema as E,
  FreeLoaderError,
  IdParams,
  ReservationRequest,
  ReservationView,
} from '@freeloader/protocol';
import { requireUserOrAgent } from '../auth/guards.js';

/** Space reservations: admit, commit (becomes used space), release. Agents touch only their own. */
const reservations: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/reservations',
    {
      preHandler: requireUserOrAgent,
      schema: {
        tags: ['reservations'],
        summary: 'Reserve space on an agent; 507 NO_SPACE when it cannot hold it',
        body: ReservationRequest,
        response: { 201: ReservationView, 400: E, 401: E, 403: E, 404: E, 507: E, 500: E },
      },
    },
    async (req, reply) => {
      if (req.agent && req.agent.id !== req.body.agentId) {
        throw new FreeLoaderError('FORBIDDEN', 'an agent may reserve only its own space');
      }
      return reply.status(201).send(await app.reservationsRepo.reserve(req.body));
    },
  );

  app.post(
    '/reservations/:id/commit',
    {
      preHandler: requireUserOrAgent,
      schema: {
        tags: ['reservations'],
        summary: 'Commit a reservation: its bytes become used space',
        params: IdParams,
        response: { 200: ReservationView, 400: E, 401: E, 403: E, 404: E, 409: E, 410: E, 500: E },
      },
    },
    async (req) => app.reservationsRepo.commit(req.params.id, req.agent?.id),
  );

  app.delete(
    '/reservations/:id',
    {
      preHandler: requireUserOrAgent,
      schema: {
        tags: ['reservations'],
        summary: 'Release a reservation (committed bytes are given back)',
        params: IdParams,
        response: { 200: ReservationView, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => app.reservationsRepo.release(req.params.id, req.agent?.id),
  );
};
export default reservations;
