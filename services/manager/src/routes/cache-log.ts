import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  ErrorBodySchema as E,
  EvictionLogEntry,
  EvictionLogQuery,
  PrincipalView,
} from '@freeloader/protocol';
import { requireUser } from '../auth/guards.js';
import { evictionLog } from '../repositories/evictions.js';
import { principals } from '../repositories/principals.js';

/** The eviction log (what, when, why, for which import) and display names of principals. */
const cacheLog: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/cache/evictions',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['prefix'],
        summary: 'Trims, evictions and extensions, newest first, with why and for which import',
        querystring: EvictionLogQuery,
        response: { 200: Type.Array(EvictionLogEntry), 400: E, 401: E, 500: E },
      },
    },
    async (req) => evictionLog(app.pg, req.query.limit),
  );

  app.get(
    '/principals',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['auth'],
        summary: 'Display names of users and agents by id (for showing names, not UUIDs)',
        response: { 200: Type.Array(PrincipalView), 401: E, 500: E },
      },
    },
    async () => principals(app.pg),
  );
};
export default cacheLog;
