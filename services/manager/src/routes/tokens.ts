import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  ErrorBodySchema as E,
  FreeLoaderError,
  IdParams,
  JoinTokenCreate,
  JoinTokenCreated,
  JoinTokenView,
  Ok,
  formatJoinToken,
} from '@freeloader/protocol';
import { requireUser } from '../auth/guards.js';

/** Join tokens (admin only): mint (secret shown once), list, revoke. */
const tokens: FastifyPluginAsyncTypebox = async (app) => {
  const admin = requireUser('admin');

  app.post(
    '/tokens',
    {
      preHandler: admin,
      schema: {
        tags: ['tokens'],
        summary: 'Create a join token; its secret is in this response only',
        body: Type.Optional(JoinTokenCreate),
        response: { 201: JoinTokenCreated, 400: E, 401: E, 403: E, 500: E },
      },
    },
    async (req, reply) => {
      const created = await app.joinTokensRepo.create(req.body ?? {}, req.user!.id);
      // The agent pins the manager's CA from the token (see protocol/join-token.ts).
      const token = formatJoinToken(created.token, app.managerTrust?.fingerprint);
      return reply.status(201).send({ ...created, token });
    },
  );

  app.get(
    '/tokens',
    {
      preHandler: admin,
      schema: {
        tags: ['tokens'],
        summary: 'List join tokens (never their secrets)',
        response: { 200: Type.Array(JoinTokenView), 401: E, 403: E, 500: E },
      },
    },
    async () => app.joinTokensRepo.list(),
  );

  app.delete(
    '/tokens/:id',
    {
      preHandler: admin,
      schema: {
        tags: ['tokens'],
        summary: 'Revoke a join token',
        params: IdParams,
        response: { 200: Ok, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => {
      if (!(await app.joinTokensRepo.revoke(req.params.id))) {
        throw new FreeLoaderError('NOT_FOUND', `no join token ${req.params.id}`);
      }
      return { ok: true as const };
    },
  );
};
export default tokens;
