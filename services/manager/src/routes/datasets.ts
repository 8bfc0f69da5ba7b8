import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import {
  DatasetDeleted,
  DatasetMap,
  DatasetView,
  ErrorBodySchema as E,
  FreeLoaderError,
  IdParams,
  MAX_MAP_HASH_RANGE,
  MapRangeQuery,
  PathQuery,
} from '@freeloader/protocol';
import { noDataset, requireDataset, withMayManage } from '../auth/access.js';
import { requireUser, requireUserOrAgent } from '../auth/guards.js';
import type { Action } from '../auth/permissions.js';
import { deleteDataset, type DatasetLifecycleDeps } from '../dataset-lifecycle.js';
import { withHealth } from '../placement/health-views.js';
import type { PlacementDeps } from '../placement/placement-deps.js';
import { mapBody, type MapRange } from './map-body.js';

/**
 * Dataset views, the read map (extents, donors, hashes, capability) and deletion. Each answers
 * only callers permissions.ts lets read (or, for deletion, manage) the dataset.
 */
const datasets: FastifyPluginAsyncTypebox = async (app) => {
  const placement: PlacementDeps = app;
  const lifecycle: DatasetLifecycleDeps = app;
  /** The dataset `id` if the caller may take `action` on it (404 when it may not read it). */
  async function mustGet(
    req: FastifyRequest,
    id: string,
    action: Action,
    verb?: string,
  ): Promise<DatasetView> {
    return requireDataset(req, action, await app.namespaceRepo.get(id), () => noDataset(id), verb);
  }

  app.get(
    '/datasets/by-path',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['datasets'],
        summary: 'A dataset by its namespace path',
        querystring: PathQuery,
        response: { 200: DatasetView, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => {
      const missing = () =>
        new FreeLoaderError('DATASET_NOT_FOUND', `no dataset "${req.query.path}"`);
      const found = await app.namespaceRepo.getByPath(req.query.path);
      const dataset = await requireDataset(req, 'read', found, missing);
      return withMayManage(req, (await withHealth(placement, [dataset]))[0]!);
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
    async (req) => {
      const dataset = await mustGet(req, req.params.id, 'read');
      const [view] = await withHealth(placement, [dataset]);
      return req.agent ? view! : withMayManage(req, view!);
    },
  );

  app.get(
    '/datasets/:id/map',
    {
      preHandler: requireUserOrAgent,
      schema: {
        tags: ['datasets'],
        summary: 'Where every morsel lives, its hash, and a signed read capability',
        description:
          'With `first`/`count`, only that range of hashes (and tags); with ' +
          '`Accept: application/octet-stream`, only those hashes as 32 bytes each, or with ' +
          '`of=tags` those AES-GCM tags as 16 bytes each (no capability, not counted as a read).',
        params: IdParams,
        querystring: MapRangeQuery,
        response: { 200: DatasetMap, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req, reply) => {
      // Before any capability is signed: only readers (and agents that hold it) get one.
      const dataset = await mustGet(req, req.params.id, 'read');
      if (dataset.state === 'deleting') {
        throw new FreeLoaderError('DATASET_NOT_FOUND', `dataset ${dataset.id} is being deleted`);
      }
      const range = hashRange(req.query, req.headers.accept);
      if (range?.binary) {
        // A reader's next page of hashes (32 bytes a morsel) or, for a user, of an encrypted
        // dataset's tags (16 bytes a morsel): nothing else to compute or sign.
        const bytes =
          range.of === 'tags'
            ? req.user
              ? await app.placementRepo.getTags(dataset.id, range.first, range.count)
              : Buffer.alloc(0)
            : await app.placementRepo.getHashes(dataset.id, range.first, range.count);
        // The route's schema describes the JSON map; a Buffer is sent as is, unserialised.
        return reply.type('application/octet-stream').send(bytes as never);
      }
      return mapBody(app, req, dataset, range);
    },
  );

  app.delete(
    '/datasets/:id',
    {
      // Users only: agents never delete datasets through the API, only through delete jobs.
      preHandler: requireUser(),
      schema: {
        tags: ['datasets'],
        summary: 'Delete a dataset: donors drop its morsels, then it is gone',
        params: IdParams,
        response: { 200: DatasetDeleted, 400: E, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => {
      await mustGet(req, req.params.id, 'manage', 'delete');
      return { ok: true as const, ...(await deleteDataset(lifecycle, req.params.id)) };
    },
  );
};
export default datasets;

/**
 * The range of hashes a map request asks for: none (every hash, as JSON) unless `first` or
 * `count` is given or the client accepts only binary; binary ranges default to the longest one.
 *
 * @example hashRange({ first: 4096 }, 'application/octet-stream')
 *   // → { first: 4096, count: 65536, binary: true, of: 'hashes' }
 */
export function hashRange(
  query: MapRangeQuery,
  accept: string | undefined,
): (MapRange & { binary: boolean; of: 'hashes' | 'tags' }) | undefined {
  const binary = /application\/octet-stream/i.test(accept ?? '');
  if (query.first === undefined && query.count === undefined && !binary) return undefined;
  const first = query.first ?? 0;
  const count = query.count ?? (binary ? MAX_MAP_HASH_RANGE : undefined);
  return { first, count, binary, of: query.of ?? 'hashes' };
}
