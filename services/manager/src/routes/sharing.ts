import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import {
  AccessQuery,
  AccessView,
  ChownRequest,
  ErrorBodySchema as E,
  FreeLoaderError,
  ShareRequest,
  UnshareQuery,
} from '@freeloader/protocol';
import { requireDataset, requireFolder, withMayManage } from '../auth/access.js';
import type { Action } from '../auth/permissions.js';
import { requireUser } from '../auth/guards.js';

const errors = { 400: E, 401: E, 403: E, 404: E, 500: E };

/** Owner and sharing of datasets and folders: see, share, unshare, chown (issue 17 item 2). */
const sharing: FastifyPluginAsyncTypebox = async (app) => {
  /** The dataset or folder at `path` ('' is the root), checked for `action` by the caller. */
  async function itemAt(req: FastifyRequest, path: string, action: Action, verb?: string) {
    // One answer for "not there" and "not yours to know about", whichever kind it is.
    const missing = () => new FreeLoaderError('NOT_FOUND', `no dataset or folder "${path}"`);
    const dataset = path === '' ? null : await app.namespaceRepo.getByPath(path);
    if (dataset) {
      await requireDataset(req, action, dataset, missing, verb);
      return { kind: 'dataset' as const, id: dataset.id, path: dataset.path };
    }
    const folder = await requireFolder(
      req,
      action,
      await app.namespaceRepo.listedFolderAt(path),
      missing,
      verb,
    );
    return { kind: 'folder' as const, id: folder.id, path: folder.path };
  }

  /** The access view of an item the caller has already been allowed to see. */
  async function accessOf(req: FastifyRequest, item: Awaited<ReturnType<typeof itemAt>>) {
    const view =
      item.kind === 'dataset'
        ? await app.namespaceRepo.get(item.id)
        : await app.namespaceRepo.folderAt(item.path);
    if (!view) throw new FreeLoaderError('NOT_FOUND', `"${item.path}" is gone`);
    const { ownerId, owner, sharing: shares } = view;
    return withMayManage(req, { ...item, ownerId, owner, sharing: shares });
  }

  async function groupId(name: string | undefined): Promise<string | null> {
    if (name === undefined) return null;
    const group = await app.ownershipRepo.groupByName(name);
    if (!group) throw new FreeLoaderError('NOT_FOUND', `no group "${name}"`);
    return group.id;
  }

  app.get(
    '/access',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['sharing'],
        summary: 'Owner and sharing of a dataset or folder (own shares and inherited ones)',
        querystring: AccessQuery,
        response: { 200: AccessView, ...errors },
      },
    },
    async (req) => accessOf(req, await itemAt(req, req.query.path, 'read')),
  );

  app.put(
    '/shares',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['sharing'],
        summary: 'Share a dataset or folder with a group (optionally to manage) or the site',
        body: ShareRequest,
        response: { 200: AccessView, ...errors },
      },
    },
    async (req) => {
      const manage = req.body.manage ?? false;
      if (manage && req.body.group === undefined) {
        throw new FreeLoaderError(
          'VALIDATION_FAILED',
          'only a group can be given manage rights (its managers); the site can only read',
        );
      }
      const item = await itemAt(req, req.body.path, 'manage', 'share');
      await app.ownershipRepo.share(item, await groupId(req.body.group), manage);
      return accessOf(req, item);
    },
  );

  app.delete(
    '/shares',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['sharing'],
        summary: 'Stop sharing a dataset or folder with a group or (no group) the site',
        querystring: UnshareQuery,
        response: { 200: AccessView, ...errors },
      },
    },
    async (req) => {
      const item = await itemAt(req, req.query.path, 'manage', 'unshare');
      const audience = req.query.group ?? 'the site';
      if (!(await app.ownershipRepo.unshare(item, await groupId(req.query.group)))) {
        throw new FreeLoaderError(
          'NOT_FOUND',
          `${item.path || '/'} itself is not shared with ${audience} (an inherited share is removed from the folder it is set on)`,
        );
      }
      return accessOf(req, item);
    },
  );

  app.put(
    '/owner',
    {
      preHandler: requireUser('admin'),
      schema: {
        tags: ['sharing'],
        summary: 'Give a dataset or folder to another user (admin)',
        body: ChownRequest,
        response: { 200: AccessView, ...errors },
      },
    },
    async (req) => {
      const item = await itemAt(req, req.body.path, 'chown');
      const user = await app.usersRepo.findByUsername(req.body.username);
      if (!user) throw new FreeLoaderError('NOT_FOUND', `no user "${req.body.username}"`);
      await app.ownershipRepo.chown(item, user.id);
      return accessOf(req, item);
    },
  );
};
export default sharing;
