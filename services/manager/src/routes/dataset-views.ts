import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  DatasetPlacement,
  DatasetSearchQuery,
  DatasetView,
  ErrorBodySchema as E,
  IdParams,
  morselCount,
  ThroughputHistory,
  type AgentState,
} from '@freeloader/protocol';
import { noDataset, readableOnly, requireDataset } from '../auth/access.js';
import { requireUser } from '../auth/guards.js';
import { withHealth } from '../placement/health-views.js';

/** Read-only dataset views for the console: search, placement for display, throughput history. */
const datasetViews: FastifyPluginAsyncTypebox = async (app) => {
  async function mustRead(req: FastifyRequest, id: string): Promise<DatasetView> {
    return requireDataset(req, 'read', await app.namespaceRepo.get(id), () => noDataset(id));
  }

  app.get(
    '/datasets',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['datasets'],
        summary: 'Search datasets by path (case-insensitive substring), by path order',
        querystring: DatasetSearchQuery,
        response: { 200: Type.Array(DatasetView), 400: E, 401: E, 500: E },
      },
    },
    async (req) => {
      // Non-admins search everything matching, then keep what they may read, up to the limit.
      const limit = req.query.limit ?? 100;
      const found = await app.namespaceRepo.search(
        req.query.query ?? '',
        req.user!.role === 'admin' ? limit : null,
      );
      return withHealth(app, (await readableOnly(req, found)).slice(0, limit));
    },
  );

  app.get(
    '/datasets/:id/placement',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['datasets'],
        summary: 'Which donor holds which stripes (no capability; not counted as an access)',
        params: IdParams,
        response: { 200: DatasetPlacement, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => {
      const dataset = await mustRead(req, req.params.id);
      const extents = await app.placementRepo.getPlacement(dataset.id);
      const agents = await app.agentsRepo.getMany([...new Set(extents.flatMap((e) => e.donors))]);
      return {
        datasetId: dataset.id,
        morselSize: dataset.morselSize,
        morsels: morselCount(dataset.sizeBytes, dataset.morselSize),
        extents,
        donors: agents.map((a) => {
          const state: AgentState = a.revokedAt ? 'revoked' : app.softState.stateOf(a.id);
          return { id: a.id, name: a.name, state };
        }),
      };
    },
  );

  app.get(
    '/datasets/:id/throughput',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['datasets'],
        summary: 'Recent import throughput of a dataset (kept in memory; empty after a restart)',
        params: IdParams,
        response: { 200: ThroughputHistory, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => {
      const dataset = await mustRead(req, req.params.id);
      return { datasetId: dataset.id, samples: app.throughput.history(dataset.id) };
    },
  );
};
export default datasetViews;
