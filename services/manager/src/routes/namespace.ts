import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorBodySchema as E,
  FolderCreate,
  FolderView,
  Listing,
  ListQuery,
} from '@freeloader/protocol';
import { folderVisible, readableOnly, visibleFolders } from '../auth/access.js';
import { requireCreatable } from '../auth/create-access.js';
import { requireUser } from '../auth/guards.js';
import { withHealth } from '../placement/health-views.js';
import { noFolder } from '../repositories/namespace.js';

/** Browse the namespace and make folders. */
const namespace: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/namespace',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['namespace'],
        summary: 'Folders and datasets directly under a folder (the root by default)',
        querystring: ListQuery,
        response: { 200: Listing, 400: E, 401: E, 404: E, 500: E },
      },
    },
    async (req) => {
      // A folder the caller may not see answers as a missing one: no probing for names.
      const folder = await app.namespaceRepo.listedFolderAt(req.query.path);
      if (!folder || !(await folderVisible(req, folder))) throw noFolder(req.query.path);
      // Only what the caller may read; folders that hold something it may read.
      const listing = await app.namespaceRepo.list(req.query.path);
      const datasets = await readableOnly(req, listing.datasets);
      await withHealth(app, datasets);
      return { ...listing, folders: await visibleFolders(req, listing.folders), datasets };
    },
  );

  app.post(
    '/folders',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['namespace'],
        summary: 'Create a folder and any missing parents (mkdir -p)',
        body: FolderCreate,
        response: { 201: FolderView, 400: E, 401: E, 403: E, 409: E, 500: E },
      },
    },
    // Folders it creates belong to the caller; existing ones keep their owner. Where the
    // caller may create, and what it learns of names it may not see: auth/create-access.ts.
    async (req, reply) => {
      const plan = await requireCreatable(req, req.body.path, 'folder');
      return reply
        .status(201)
        .send(await app.namespaceRepo.mkdirp(req.body.path, req.user!.id, plan.newFrom));
    },
  );
};
export default namespace;
