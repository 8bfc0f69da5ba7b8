import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorBodySchema as E,
  IdParams,
  Ok,
  QuotaChangeRequest,
  QuotaChangeResponse,
  RelocationCommitResponse,
} from '@freeloader/protocol';
import { requireAgent } from '../auth/guards.js';
import { changeAgentQuota } from './change-quota.js';
import { abortRelocation, commitRelocation } from './commit-relocation.js';
import type { RelocationDeps } from './relocation-deps.js';

/** Quota changes from agents and the relocation jobs they cause. */
const relocation: FastifyPluginAsyncTypebox = async (app) => {
  const deps: RelocationDeps = app;
  app.post(
    '/agents/me/quota',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['agents'],
        summary: 'Change the calling agent’s quota; a cut below its holdings relocates the excess',
        body: QuotaChangeRequest,
        response: { 200: QuotaChangeResponse, 400: E, 401: E, 403: E, 500: E },
      },
    },
    async (req) =>
      changeAgentQuota(deps, req.agent!.id, req.body.quotaBytes, req.body.quotaVersion),
  );

  app.post(
    '/relocations/:id/commit',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['jobs'],
        summary: 'Every morsel of a relocate job arrived: move placement and the ledger',
        params: IdParams,
        response: { 200: RelocationCommitResponse, 400: E, 401: E, 403: E, 404: E, 409: E, 500: E },
      },
    },
    async (req) => commitRelocation(deps, req.params.id, req.agent!.id),
  );

  app.post(
    '/relocations/:id/abort',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['jobs'],
        summary: 'A relocate job gave up before its commit: release the targets’ reservations',
        params: IdParams,
        response: { 200: Ok, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => {
      await abortRelocation(deps, req.params.id, req.agent!.id);
      return { ok: true as const };
    },
  );
};
export default relocation;
