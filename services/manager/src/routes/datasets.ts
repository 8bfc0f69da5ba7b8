import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  CAPABILITY_TTL_S,
  DatasetDeleted,
  DatasetMap,
  DatasetView,
  ErrorBodySchema as E,
  FreeLoaderError,
  IdParams,
  PathQuery,
  signCapability,
  type AgentState,
} from '@freeloader/protocol';
import { principalOf, requireUser, requireUserOrAgent } from '../auth/guards.js';
import { deleteDataset, type DatasetLifecycleDeps } from '../dataset-lifecycle.js';
import { withHealth } from '../placement/health-views.js';
import type { PlacementDeps } from '../placement/placement-deps.js';
import { donorSpeeds } from '../placement/rate-estimates.js';
import { throttleFields } from '../throttle-view.js';
import { faultsOfDataset } from '../repositories/morsel-faults.js';

/** An encrypted dataset's key and tags as the map carries them; nothing for one in clear. */
async function sealingOf(
  app: FastifyInstance,
  datasetId: string,
): Promise<{ dataKey?: string; tags?: string }> {
  const key = await app.dataKeys.get(datasetId);
  if (!key) return {};
  const tags = await app.placementRepo.getTags(datasetId);
  return { dataKey: key.toString('base64'), tags: tags.toString('hex') };
}

/** Dataset views, the read map (extents, donors, hashes, capability) and deletion. */
const datasets: FastifyPluginAsyncTypebox = async (app) => {
  const placement: PlacementDeps = app;
  const lifecycle: DatasetLifecycleDeps = app;
  async function mustGet(id: string): Promise<DatasetView> {
    const dataset = await app.namespaceRepo.get(id);
    if (!dataset) throw new FreeLoaderError('DATASET_NOT_FOUND', `no dataset ${id}`);
    return dataset;
  }

  app.get(
    '/datasets/by-path',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['datasets'],
        summary: 'A dataset by its namespace path',
        querystring: PathQuery,
        response: { 200: DatasetView, 400: E, 401: E, 404: E, 500: E },
      },
    },
    async (req) => {
      const dataset = await app.namespaceRepo.getByPath(req.query.path);
      if (!dataset)
        throw new FreeLoaderError('DATASET_NOT_FOUND', `no dataset "${req.query.path}"`);
      return (await withHealth(placement, [dataset]))[0]!;
    },
  );

  app.get(
    '/datasets/:id',
    {
      preHandler: requireUserOrAgent,
      schema: {
        tags: ['datasets'],
        summary: 'A dataset by id',
        params: IdParams,
        response: { 200: DatasetView, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => (await withHealth(placement, [await mustGet(req.params.id)]))[0]!,
  );

  app.get(
    '/datasets/:id/map',
    {
      preHandler: requireUserOrAgent,
      schema: {
        tags: ['datasets'],
        summary: 'Where every morsel lives, its hash, and a signed read capability',
        params: IdParams,
        response: { 200: DatasetMap, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => {
      const dataset = await mustGet(req.params.id);
      if (dataset.state === 'deleting') {
        throw new FreeLoaderError('DATASET_NOT_FOUND', `dataset ${dataset.id} is being deleted`);
      }
      const [extents, hashes, faults, sealing] = await Promise.all([
        app.placementRepo.getPlacement(dataset.id),
        app.placementRepo.getHashes(dataset.id),
        faultsOfDataset(app.pg, dataset.id),
        // The key goes with a user's read capability only: donors never read plaintext.
        req.user ? sealingOf(app, dataset.id) : {},
      ]);
      const donorIds = [...new Set(extents.flatMap((e) => e.donors))];
      const agents = await app.agentsRepo.getMany(donorIds);
      const { rates } = await donorSpeeds(placement, donorIds, principalOf(req));
      const donors = agents.map((a) => {
        const state: AgentState = a.revokedAt ? 'revoked' : app.softState.stateOf(a.id);
        const hb = app.softState.heartbeatOf(a.id);
        const url = hb?.url ?? a.url;
        return {
          id: a.id,
          url,
          state,
          usable: state === 'live',
          ...throttleFields(hb, a.throttle),
          ...(rates.has(a.id) ? { rate: rates.get(a.id)!.rate } : {}),
        };
      });
      const exp = Math.floor(Date.now() / 1000) + CAPABILITY_TTL_S;
      const capability = signCapability(app.signingKeys.privateKey, {
        ds: dataset.id,
        ops: ['read'],
        sub: principalOf(req),
        exp,
      });
      // A read: eviction's recency, and the count that may earn a longer prefix (issue 7).
      await app.prefixCache.extensions.noteRead(dataset, principalOf(req));
      return {
        dataset,
        extents,
        donors,
        hashes: hashes.toString('hex'),
        ...sealing,
        capability,
        capabilityExpiresAt: new Date(exp * 1000).toISOString(),
        // Copies a scrub, start-up check or client found bad: readers skip them until repaired.
        ...(faults.length > 0
          ? { badCopies: faults.map((f) => ({ morsel: f.morsel, donor: f.agentId })) }
          : {}),
      };
    },
  );

  app.delete(
    '/datasets/:id',
    {
      preHandler: requireUserOrAgent,
      schema: {
        tags: ['datasets'],
        summary: 'Delete a dataset: donors drop its morsels, then it is gone',
        params: IdParams,
        response: { 200: DatasetDeleted, 400: E, 401: E, 404: E, 500: E },
      },
    },
    async (req) => ({ ok: true as const, ...(await deleteDataset(lifecycle, req.params.id)) }),
  );
};
export default datasets;
