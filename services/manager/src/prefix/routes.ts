import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  CacheCut,
  CachedRequest,
  CacheStatus,
  ClientRateView,
  ErrorBodySchema as E,
  FreeLoaderError,
  IdParams,
  Ok,
  PatchHashes,
  PatchReport,
  PatchSessionPlan,
  PatchSessionView,
  PinRequest,
  SourceMeasurement,
  SourceStatsView,
  SuffixPlan,
  SuffixPlanRequest,
} from '@freeloader/protocol';
import {
  aboutReadable,
  noDataset,
  readableIds,
  requireDataset,
  rowsToScan,
} from '../auth/access.js';
import { principalOf, requireAgent, requireUser, requireUserOrAgent } from '../auth/guards.js';
import { sourceKey } from './source-key.js';

/** Recent patch sessions `GET /patch-sessions` lists. */
const PATCH_SESSIONS_LISTED = 50;

const errors = { 400: E, 401: E, 403: E, 404: E, 409: E, 500: E };

/** Source registry, client rates, cache status and pins, suffix plans and patch sessions. */
const prefixRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/sources',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['prefix'],
        summary: 'What each source is like: startup latency L, patch rate, good request size',
        response: { 200: Type.Array(SourceStatsView), ...errors },
      },
    },
    async () => app.prefixCache.sources.list(),
  );

  app.post(
    '/sources/measurements',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['prefix'],
        summary: 'Record what `freeloader source probe` measured against a source',
        body: SourceMeasurement,
        response: { 200: SourceStatsView, ...errors },
      },
    },
    async (req) => {
      const key = sourceKey(req.body.uri);
      if (!key) throw new FreeLoaderError('BAD_URI', `cannot tell the source of "${req.body.uri}"`);
      await app.prefixCache.sources.observe(key, {
        latencyS: req.body.latencyS,
        patchRate: req.body.patchRate,
        patchWidth: req.body.width,
        requestSize: req.body.requestSize,
      });
      return (await app.prefixCache.sources.get(key))!;
    },
  );

  app.get(
    '/clients/rates',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['prefix'],
        summary: "Each client's in-cache read rate R_client ('' is every client together)",
        response: { 200: Type.Array(ClientRateView), ...errors },
      },
    },
    async () => app.prefixCache.clients.list(),
  );

  app.get(
    '/cache',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['prefix'],
        summary:
          'Cache space, watermarks, eviction counts, and every dataset with its model prefix',
        response: { 200: CacheStatus, ...errors },
      },
    },
    // Space and counts are the cluster's; the datasets listed only those the caller may read.
    async (req) => {
      const status = await app.prefixCache.cache.status();
      const readable = await readableIds(
        req,
        status.datasets.map((d) => d.id),
      );
      if (readable === 'all') return status;
      return { ...status, datasets: status.datasets.filter((d) => readable.has(d.id)) };
    },
  );

  app.put(
    '/datasets/:id/pin',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['prefix'],
        summary: 'Pin a dataset (never evicted) or unpin it',
        params: IdParams,
        body: PinRequest,
        response: { 200: Ok, ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const missing = () => noDataset(id);
      const dataset = await app.namespaceRepo.get(id);
      await requireDataset(req, 'manage', dataset, missing, req.body.pinned ? 'pin' : 'unpin');
      if (!(await app.prefixCache.cache.pin(id, req.body.pinned))) throw missing();
      return { ok: true as const };
    },
  );

  app.put(
    '/datasets/:id/cached',
    {
      preHandler: requireUser('admin'),
      schema: {
        tags: ['prefix'],
        summary: "Cut a dataset's cached part back to a prefix, from the tail (0 evicts it)",
        params: IdParams,
        body: CachedRequest,
        response: { 200: CacheCut, ...errors },
      },
    },
    async (req) => {
      const dataset = await app.namespaceRepo.get(req.params.id);
      if (!dataset) throw new FreeLoaderError('DATASET_NOT_FOUND', `no dataset ${req.params.id}`);
      if (dataset.state !== 'ready') {
        throw new FreeLoaderError(
          'DATASET_NOT_READY',
          `dataset ${dataset.path} is ${dataset.state}`,
        );
      }
      const cut = await app.prefixCache.cache.trim(dataset.id, req.body.cachedBytes, {
        reason: 'admin',
        forUserId: req.user?.id ?? null,
      });
      const { perDonor: _perDonor, ...view } = cut ?? {
        datasetId: dataset.id,
        kind: 'none' as const,
        fromBytes: dataset.cachedBytes,
        toBytes: dataset.cachedBytes,
        freedBytes: 0,
        perDonor: undefined,
      };
      return view;
    },
  );

  app.post(
    '/datasets/:id/patch',
    {
      preHandler: requireUserOrAgent,
      schema: {
        tags: ['prefix'],
        summary: 'Open a patch session for the uncached suffix: patching nodes and request size',
        params: IdParams,
        body: Type.Optional(SuffixPlanRequest),
        response: { 200: SuffixPlan, ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const dataset = await requireDataset(req, 'read', await app.namespaceRepo.get(id), () =>
        noDataset(id),
      );
      return app.prefixCache.sessions.open(dataset, principalOf(req), req.body ?? {});
    },
  );

  app.get(
    '/patch-sessions',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['prefix'],
        summary: 'Recent patch sessions with their nodes and aggregate rates',
        response: { 200: Type.Array(PatchSessionView), ...errors },
      },
    },
    // Only sessions of datasets the caller may read (permissions.ts).
    async (req) => {
      const rows = await app.prefixCache.sessions.list(rowsToScan(req, PATCH_SESSIONS_LISTED));
      return (await aboutReadable(req, rows)).slice(0, PATCH_SESSIONS_LISTED);
    },
  );

  app.get(
    '/patch-sessions/:id/plan',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['prefix'],
        summary: 'A patching node fetches its session: plan, source, shuffle capability',
        params: IdParams,
        response: { 200: PatchSessionPlan, ...errors },
      },
    },
    async (req) => app.prefixCache.sessions.planFor(req.params.id, req.agent!.id),
  );

  app.post(
    '/patch-sessions/:id/report',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['prefix'],
        summary: "A patching node's download account (feeds the source registry)",
        params: IdParams,
        body: PatchReport,
        response: { 200: Ok, ...errors },
      },
    },
    async (req) => {
      await app.prefixCache.sessions.report(req.params.id, req.agent!.id, req.body);
      return { ok: true as const };
    },
  );

  app.post(
    '/patch-sessions/:id/hashes',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['prefix'],
        summary: 'SHA-256 of patched morsels the manager had none for',
        params: IdParams,
        body: PatchHashes,
        response: { 200: Ok, ...errors },
      },
    },
    async (req) => {
      await app.prefixCache.sessions.hashes(req.params.id, req.agent!.id, req.body);
      return { ok: true as const };
    },
  );
};
export default prefixRoutes;
