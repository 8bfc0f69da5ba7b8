import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorBodySchema as E,
  FreeLoaderError,
  LoginRequest,
  LoginResponse,
  Ok,
  SESSION_TTL_S,
  UserView,
} from '@freeloader/protocol';
import { requireUser, SESSION_COOKIE } from '../auth/guards.js';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../db/stored-secrets.js';

/** Sessions: log in (token in the body and as an httpOnly cookie), log out, who am I. */
const auth: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['auth'],
        summary: 'Log in; the session token is returned and set as the fl_session cookie',
        body: LoginRequest,
        response: { 200: LoginResponse, 400: E, 401: E, 429: E, 500: E },
      },
    },
    async (req, reply) => {
      try {
        await app.loginThrottle.check(req.body.username, req.ip);
      } catch (e) {
        const retryAfterS = (e as FreeLoaderError).details?.retryAfterS;
        if (typeof retryAfterS === 'number') reply.header('retry-after', String(retryAfterS));
        throw e;
      }
      const user = await app.usersRepo.findByUsername(req.body.username);
      // Hash even for unknown users, so response time does not reveal which names exist.
      const ok = await verifyPassword(req.body.password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
      if (!user || !ok) {
        await app.loginThrottle.failed(req.body.username, req.ip);
        throw new FreeLoaderError('BAD_CREDENTIALS', 'wrong username or password');
      }
      // The audit log's actor for this request.
      req.user = { id: user.id, username: user.username, role: user.role };
      const session = await app.usersRepo.createSession(user.id, SESSION_TTL_S);
      reply.setCookie(SESSION_COOKIE, session.token, {
        httpOnly: true,
        sameSite: 'strict',
        secure: req.protocol === 'https',
        path: '/',
        maxAge: SESSION_TTL_S,
      });
      return {
        token: session.token,
        user: { id: user.id, username: user.username, role: user.role },
        expiresAt: session.expiresAt.toISOString(),
      };
    },
  );

  app.post(
    '/auth/logout',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['auth'],
        summary: 'End this session',
        response: { 200: Ok, 401: E, 500: E },
      },
    },
    async (req, reply) => {
      await app.usersRepo.deleteSession(req.sessionToken!);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return { ok: true as const };
    },
  );

  app.get(
    '/auth/me',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['auth'],
        summary: 'The signed-in user',
        response: { 200: UserView, 401: E, 500: E },
      },
    },
    async (req) => req.user!,
  );
};
export default auth;
