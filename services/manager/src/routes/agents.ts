import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  AgentHoldings,
  AgentListQuery,
  AgentPage,
  AgentView,
  EnrollRequest,
  EnrollResponse,
  ErrorBodySchema as E,
  FreeLoaderError,
  type FailureClass,
  Heartbeat,
  HeartbeatResponse,
  IdParams,
  Ok,
} from '@freeloader/protocol';
import { pageOfAgents, wantsPage } from '../agents/agent-page.js';
import { requireAgent, requireUser } from '../auth/guards.js';
import type { AgentRecord } from '../repositories/agents.js';
import type { SoftState } from '../soft-state.js';
import { throttleFields } from '../throttle-view.js';

/** An agent as the console sees it: database facts merged with in-memory soft state. */
export function agentView(a: AgentRecord, soft: SoftState): AgentView {
  const hb = soft.heartbeatOf(a.id);
  return {
    id: a.id,
    name: a.name,
    url: hb?.url ?? a.url,
    state: a.revokedAt ? 'revoked' : soft.stateOf(a.id),
    ...(a.revokedAt ? {} : { failureClass: failureClassOf(a, soft) }),
    bandwidthOnly: a.bandwidthOnly,
    quotaBytes: hb?.quotaBytes ?? a.quotaBytes,
    usedBytes: a.usedBytes,
    freeBytes: hb?.freeBytes ?? a.freeBytes,
    reservedBytes: a.reservedBytes,
    servingRate: hb?.servingRate ?? a.servingRate,
    ...throttleFields(hb, a.throttle),
    ...(hb?.diagnostics ? { diagnostics: hb.diagnostics } : {}),
    lastHeartbeatAgoMs: soft.lastSeenAgoMs(a.id),
    enrolledAt: a.enrolledAt.toISOString(),
  };
}

/**
 * A donor's failure class: leaving and lost are database facts (they survive a restart);
 * offline is soft state (stale or dead, not yet lost).
 *
 * @example failureClassOf({ id, lostAt: null, leavingAt: null }, soft) // 'online' while live
 */
export function failureClassOf(
  a: Pick<AgentRecord, 'id' | 'lostAt' | 'leavingAt'>,
  soft: Pick<SoftState, 'stateOf'>,
): FailureClass {
  if (a.leavingAt) return 'leaving';
  if (a.lostAt) return 'lost';
  return soft.stateOf(a.id) === 'live' ? 'online' : 'offline';
}

/** Enrollment, heartbeats, the donor list, revocation and startup reconciliation. */
const agents: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/agents/enroll',
    {
      schema: {
        tags: ['agents'],
        summary: 'Enroll an agent with a join token',
        body: EnrollRequest,
        response: { 201: EnrollResponse, 400: E, 401: E, 500: E },
      },
    },
    async (req, reply) => {
      const { agentId, credential } = await app.agentsRepo.enroll(req.body);
      app.softState.record(agentId);
      req.log.info({ agentId, name: req.body.name }, 'agent enrolled');
      return reply.status(201).send({
        agentId,
        credential,
        managerPublicKey: app.signingKeys.publicKeyPem,
        heartbeatIntervalMs: app.config.heartbeatIntervalMs,
      });
    },
  );

  app.post(
    '/agents/heartbeat',
    {
      // Every agent, every few seconds: keep the access log for problems only.
      logLevel: 'warn',
      preHandler: requireAgent,
      schema: {
        tags: ['agents'],
        summary: 'Soft state from an agent',
        body: Heartbeat,
        response: { 200: HeartbeatResponse, 400: E, 401: E, 403: E, 500: E },
      },
    },
    async (req) => {
      // The fast path answers steady heartbeats with this route's own validator.
      const validate = req.getValidationFunction('body');
      if (validate) app.heartbeatFastPath.learn((body) => validate(body) === true);
      const agentId = req.agent!.id;
      // A new URL or probe (an agent's first heartbeat) reaches its row with the next batched
      // soft-state write (agentsRepo.flushSoftState), within a flush period: no write here.
      app.softState.record(agentId, req.body);
      // Jobs it is still running stay its own (their leases would lapse otherwise).
      if (req.body.runningJobs?.length) {
        await app.jobsRepo.renewLeases(agentId, req.body.runningJobs);
      }
      // New jobs reach the agent on its job channel (GET /jobs/wait), not in this answer.
      return {
        heartbeatIntervalMs: app.config.heartbeatIntervalMs,
        sourceAllow: (await app.sourcePolicy.current()).entries(),
      };
    },
  );

  app.get(
    '/agents',
    {
      preHandler: requireUser('admin'),
      schema: {
        tags: ['agents'],
        summary: 'Donors with live/stale/dead state and reserved bytes',
        description:
          'Every donor as an array; with `limit`, `cursor`, `state` or `q` one page of them ' +
          '(ordered by name) with per-state counts.',
        querystring: AgentListQuery,
        response: {
          200: Type.Union([Type.Array(AgentView), AgentPage]),
          400: E,
          401: E,
          403: E,
          500: E,
        },
      },
    },
    async (req) => {
      const views = (await app.agentsRepo.list()).map((a) => agentView(a, app.softState));
      return wantsPage(req.query) ? pageOfAgents(views, req.query) : views;
    },
  );

  app.get(
    '/agents/me/datasets',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['agents'],
        summary: 'What placement says the calling agent holds (startup reconciliation)',
        response: { 200: AgentHoldings, 401: E, 403: E, 500: E },
      },
    },
    async (req) => ({ datasets: await app.placementRepo.holdingsOf(req.agent!.id) }),
  );

  app.delete(
    '/agents/:id',
    {
      preHandler: requireUser('admin'),
      schema: {
        tags: ['agents'],
        summary: 'Revoke an agent: its credential stops working at once',
        params: IdParams,
        response: { 200: Ok, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => {
      const { id } = req.params;
      if (!(await app.agentsRepo.revoke(id))) {
        throw new FreeLoaderError('AGENT_NOT_FOUND', `no agent ${id}`);
      }
      app.softState.forget(id);
      app.events.publish({ type: 'agent', agentId: id, state: 'revoked' });
      return { ok: true as const };
    },
  );
};
export default agents;
