import type {
  FastifyReply,
  FastifyRequest,
  preHandlerAsyncHookHandler,
  RouteOptions,
} from 'fastify';
import fp from 'fastify-plugin';
import { createLoginFailuresRepo } from '../repositories/login-failures.js';
import { LoginThrottle } from './login-throttle.js';
import { CSRF_HEADER, FreeLoaderError, type Role, type UserView } from '@freeloader/protocol';

/** Name of the httpOnly session cookie the console uses. */
export const SESSION_COOKIE = 'fl_session';

const AGENT_BEARER =
  /^agent\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(.+)$/i;

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user, set by requireUser / requireUserOrAgent. */
    user: UserView | null;
    /** The authenticated agent, set by requireAgent / requireUserOrAgent. */
    agent: { id: string } | null;
    /** The session token that authenticated `user` (for logout). */
    sessionToken: string | null;
  }
  interface FastifyInstance {
    /** Failed-login counts per address and user name (see LoginThrottle). */
    loginThrottle: LoginThrottle;
  }
}

function bearerOf(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m) throw new FreeLoaderError('UNAUTHENTICATED', 'Authorization must be "Bearer <token>"');
  return m[1];
}

async function authenticateUser(req: FastifyRequest, token: string): Promise<boolean> {
  const user = await req.server.usersRepo.userForSession(token);
  if (!user) return false;
  req.user = user;
  req.sessionToken = token;
  return true;
}

/**
 * The agent id (lower case) and credential of an `Authorization` header
 * `Bearer agent.<id>.<credential>`; undefined for anything else.
 *
 * @example agentOfHeader(`Bearer agent.${id}.secret`) // { id, credential: 'secret' }
 */
export function agentOfHeader(
  header: string | undefined,
): { id: string; credential: string } | undefined {
  const m = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  const a = m ? AGENT_BEARER.exec(m[1]!) : null;
  return a ? { id: a[1]!.toLowerCase(), credential: a[2]! } : undefined;
}

/** Agent auth from `Bearer agent.<id>.<credential>`: 401 when wrong, 403 AGENT_REVOKED. */
async function authenticateAgent(req: FastifyRequest, token: string): Promise<void> {
  const m = AGENT_BEARER.exec(token);
  const id = m?.[1]!.toLowerCase();
  const found = id ? await req.server.agentCredentials.verify(id, m![2]!) : null;
  if (!found) throw new FreeLoaderError('UNAUTHENTICATED', 'unknown agent or wrong credential');
  if (found.revoked) throw new FreeLoaderError('AGENT_REVOKED', 'this agent has been revoked');
  req.agent = { id: id! };
}

/** Methods that change nothing, so a forged cross-site request gains nothing from them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF defence for the console's cookie session: an unsafe request authenticated by the cookie
 * alone must carry the CSRF_HEADER, which a cross-site page cannot set without a CORS preflight
 * the manager never grants. SameSite=Strict is the first line; this covers older browsers and
 * same-site (other port, other subdomain) pages.
 */
function checkCsrf(req: FastifyRequest): void {
  if (SAFE_METHODS.has(req.method)) return;
  if (req.headers[CSRF_HEADER] === undefined) {
    throw new FreeLoaderError(
      'CSRF_REJECTED',
      `cookie-authenticated ${req.method} needs the ${CSRF_HEADER} header`,
    );
  }
}

/** Resolve whoever the request carries; throws UNAUTHENTICATED when it carries nobody valid. */
async function authenticate(req: FastifyRequest, allow: { user: boolean; agent: boolean }) {
  const bearer = bearerOf(req);
  if (bearer?.startsWith('agent.')) {
    if (!allow.agent) throw new FreeLoaderError('FORBIDDEN', 'agents may not call this route');
    return authenticateAgent(req, bearer);
  }
  if (allow.user) {
    const token = bearer ?? req.cookies?.[SESSION_COOKIE];
    if (token && !bearer) checkCsrf(req);
    if (token && (await authenticateUser(req, token))) return;
    if (token) throw new FreeLoaderError('UNAUTHENTICATED', 'session expired; log in again');
  }
  throw new FreeLoaderError(
    'UNAUTHENTICATED',
    allow.user ? 'log in first (POST /api/v1/auth/login)' : 'agent credentials required',
  );
}

/** Every guard this file made; routes name them as `preHandler`, the app runs them earlier. */
const GUARDS = new WeakSet<object>();

function guard(fn: preHandlerAsyncHookHandler): preHandlerAsyncHookHandler {
  GUARDS.add(fn);
  return fn;
}

/**
 * Guard: a signed-in user, with `role` when given (admins pass every role check).
 *
 * @example app.get('/tokens', { preHandler: requireUser('admin') }, handler)
 */
export function requireUser(role?: Role): preHandlerAsyncHookHandler {
  return guard(async (req: FastifyRequest, _reply: FastifyReply) => {
    await authenticate(req, { user: true, agent: false });
    if (role && req.user!.role !== role && req.user!.role !== 'admin') {
      throw new FreeLoaderError('FORBIDDEN', `this needs the ${role} role`);
    }
  });
}

/** Guard: an enrolled, unrevoked agent. */
export const requireAgent: preHandlerAsyncHookHandler = guard(async (req) => {
  await authenticate(req, { user: false, agent: true });
});

/** Guard: either a signed-in user or an agent. */
export const requireUserOrAgent: preHandlerAsyncHookHandler = guard(async (req) => {
  await authenticate(req, { user: true, agent: true });
});

type Hook = RouteOptions['preHandler'];
const list = (h: Hook | RouteOptions['preValidation']): unknown[] =>
  h === undefined ? [] : Array.isArray(h) ? [...(h as unknown[])] : [h];

/**
 * Move a route's guards from `preHandler` to `preValidation`, ahead of its other hooks there:
 * Fastify validates the body before preHandler, so an anonymous request with a bad body would
 * learn the schema's complaint instead of 401. Routes keep writing `preHandler: requireUser()`.
 */
export function authenticateBeforeValidation(route: RouteOptions): void {
  const pre = list(route.preHandler);
  const guards = pre.filter((h) => typeof h === 'function' && GUARDS.has(h));
  if (guards.length === 0) return;
  route.preHandler = pre.filter((h) => !guards.includes(h)) as Hook;
  route.preValidation = [...guards, ...list(route.preValidation)] as RouteOptions['preValidation'];
}

/** Who is calling, for capability subjects and logs. */
export function principalOf(req: FastifyRequest): string {
  return req.agent?.id ?? req.user?.id ?? 'anonymous';
}

/** Request decorations the guards fill in. */
export default fp(
  async (app) => {
    app.decorateRequest('user', null);
    app.decorateRequest('agent', null);
    app.decorateRequest('sessionToken', null);
    app.addHook('onRoute', authenticateBeforeValidation);
    app.decorate('loginThrottle', new LoginThrottle(createLoginFailuresRepo(app.pg)));
  },
  { name: 'auth', dependencies: ['cookie', 'agent-credentials'] },
);
