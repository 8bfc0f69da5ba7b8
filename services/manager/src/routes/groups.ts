import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import {
  ErrorBodySchema as E,
  FreeLoaderError,
  GroupCreate,
  GroupParams,
  GroupView,
  MemberParams,
  MemberUpdate,
  Ok,
} from '@freeloader/protocol';
import { principalFor } from '../auth/access.js';
import { canManageGroup } from '../auth/permissions.js';
import { requireUser } from '../auth/guards.js';

const errors = { 400: E, 401: E, 403: E, 404: E, 409: E, 500: E };

/**
 * Groups (issue 17 item 2): any user may make one and becomes its first manager; a group's
 * managers and admins change its members and may delete it. Everyone signed in sees the groups
 * (to share with them).
 */
const groups: FastifyPluginAsyncTypebox = async (app) => {
  /** The group called `name`, when the caller may change it. */
  async function managed(req: FastifyRequest, name: string): Promise<string> {
    const group = await app.ownershipRepo.groupByName(name);
    if (!group) throw new FreeLoaderError('NOT_FOUND', `no group "${name}"`);
    if (!canManageGroup(await principalFor(req), group.id)) {
      throw new FreeLoaderError(
        'FORBIDDEN',
        `only a manager of group ${name} or an admin may change its members`,
      );
    }
    return group.id;
  }

  async function userId(username: string): Promise<string> {
    const user = await app.usersRepo.findByUsername(username);
    if (!user) throw new FreeLoaderError('NOT_FOUND', `no user "${username}"`);
    return user.id;
  }

  async function groupNamed(name: string): Promise<GroupView> {
    return (await app.ownershipRepo.groups()).find((g) => g.name === name)!;
  }

  app.get(
    '/groups',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['sharing'],
        summary: 'Every group with its members and managers',
        response: { 200: Type.Array(GroupView), ...errors },
      },
    },
    async () => app.ownershipRepo.groups(),
  );

  app.post(
    '/groups',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['sharing'],
        summary: 'Create a group; its creator becomes its first manager',
        body: GroupCreate,
        response: { 201: GroupView, ...errors },
      },
    },
    async (req, reply) => {
      await app.ownershipRepo.createGroup(req.body.name, req.user!.id);
      return reply.status(201).send(await groupNamed(req.body.name));
    },
  );

  app.delete(
    '/groups/:name',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['sharing'],
        summary: 'Delete a group (its managers or an admin); what was shared with it is not',
        params: GroupParams,
        response: { 200: Ok, ...errors },
      },
    },
    async (req) => {
      await app.ownershipRepo.deleteGroup(await managed(req, req.params.name));
      return { ok: true as const };
    },
  );

  app.put(
    '/groups/:name/members/:username',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['sharing'],
        summary: 'Add a member (manager: true makes them one of its managers)',
        params: MemberParams,
        body: Type.Optional(MemberUpdate),
        response: { 200: GroupView, ...errors },
      },
    },
    async (req) => {
      const group = await managed(req, req.params.name);
      await app.ownershipRepo.setMember(
        group,
        await userId(req.params.username),
        req.body?.manager ?? false,
      );
      return groupNamed(req.params.name);
    },
  );

  app.delete(
    '/groups/:name/members/:username',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['sharing'],
        summary: 'Remove a member from a group',
        params: MemberParams,
        response: { 200: GroupView, ...errors },
      },
    },
    async (req) => {
      const group = await managed(req, req.params.name);
      if (!(await app.ownershipRepo.removeMember(group, await userId(req.params.username)))) {
        throw new FreeLoaderError(
          'NOT_FOUND',
          `${req.params.username} is not in group ${req.params.name}`,
        );
      }
      return groupNamed(req.params.name);
    },
  );
};
export default groups;
