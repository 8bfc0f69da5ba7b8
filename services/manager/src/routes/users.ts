import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ErrorBodySchema as E, UserCreate, UserView } from '@freeloader/protocol';
import { requireUser } from '../auth/guards.js';

/** User management (admin): create console/CLI users and list them. */
const users: FastifyPluginAsyncTypebox = async (app) => {
  const admin = requireUser('admin');

  app.post(
    '/users',
    {
      preHandler: admin,
      schema: {
        tags: ['users'],
        summary: 'Create a user (role scientist unless given); the password is stored hashed',
        body: UserCreate,
        response: { 201: UserView, 400: E, 401: E, 403: E, 409: E, 500: E },
      },
    },
    async (req, reply) => {
      const user = await app.usersRepo.create(req.body);
      req.log.info({ userId: user.id, username: user.username, role: user.role }, 'user created');
      return reply.status(201).send(user);
    },
  );

  app.get(
    '/users',
    {
      preHandler: admin,
      schema: {
        tags: ['users'],
        summary: 'Every user, by name',
        response: { 200: Type.Array(UserView), 401: E, 403: E, 500: E },
      },
    },
    async () => app.usersRepo.list(),
  );
};
export default users;
