import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { noDataset, requireDataset } from '../auth/access.js';
import {
  AgentFaultReport,
  ClientFaultReport,
  ErrorBodySchema as E,
  FaultReportResult,
  IdParams,
} from '@freeloader/protocol';
import { principalOf, requireAgent, requireUserOrAgent } from '../auth/guards.js';
import { recordFaultReports } from '../faults/record-faults.js';
import { FaultReportLimit } from '../faults/report-limit.js';

/**
 * Bad copies reported to the manager (issue 15 item 4): a donor's scrub and start-up check, and
 * clients that read a bad hash. Recorded in `morsel_faults`; the map then marks the copies
 * unusable and repair replaces them.
 */
const faults: FastifyPluginAsyncTypebox = async (app) => {
  const limit = new FaultReportLimit();
  const deps = { pg: app.pg, events: app.events };

  app.post(
    '/agents/me/faults',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['agents'],
        summary: 'Morsels the calling donor found bad (scrub) or missing (start-up) and dropped',
        body: AgentFaultReport,
        response: { 200: FaultReportResult, 400: E, 401: E, 403: E, 500: E },
      },
    },
    async (req) => {
      const agentId = req.agent!.id;
      return recordFaultReports(
        deps,
        req.body.faults.map((f) => ({ ...f, agentId })),
      );
    },
  );

  app.post(
    '/datasets/:id/faults',
    {
      preHandler: requireUserOrAgent,
      schema: {
        tags: ['datasets'],
        summary: 'A client read these morsels from these donors and their hashes did not match',
        params: IdParams,
        body: ClientFaultReport,
        response: { 200: FaultReportResult, 400: E, 401: E, 403: E, 404: E, 429: E, 500: E },
      },
    },
    async (req) => {
      // Only its readers (and donors holding it) have read it and can have found bad copies.
      const { id } = req.params;
      const dataset = await requireDataset(req, 'read', await app.namespaceRepo.get(id), () =>
        noDataset(id),
      );
      limit.admit(principalOf(req), req.body.faults.length);
      return recordFaultReports(
        deps,
        req.body.faults.map((f) => ({
          datasetId: dataset.id,
          morsel: f.morsel,
          agentId: f.donor,
          reason: 'corrupt' as const,
          reportedBy: 'client' as const,
        })),
        { strict: true },
      );
    },
  );
};
export default faults;
