import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
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

/** Agent auth from `Bearer agent.<id>.<credential>`: 401 when wrong, 403 AGENT_REVOKED. */
async function authenticateAgent(req: FastifyRequest, token: string): Promise<void> {
  const m = AGENT_BEARER.exec(token);
  const found = m ? await req.server.agentsRepo.authenticate(m[1]!.toLowerCase(), m[2]!) : null;
  if (!found) throw new FreeLoaderError('UNAUTHENTICATED', 'unknown agent or wrong credential');
  if (found.revoked) throw new FreeLoaderError('AGENT_REVOKED', 'this agent has been revoked');
  req.agent = { id: found.id };
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

/**
 * preHandler: a signed-in user, with `role` when given (admins pass every role check).
 *
 * @example app.get('/tokens', { preHandler: requireUser('admin') }, handler)
 */
export function requireUser(role?: Role): preHandlerAsyncHookHandler {
  return async (req: FastifyRequest, _reply: FastifyReply) => {
    await authenticate(req, { user: true, agent: false });
    if (role && req.user!.role !== role && req.user!.role !== 'admin') {
      throw new FreeLoaderError('FORBIDDEN', `this needs the ${role} role`);
    }
  };
}

/** preHandler: an enrolled, unrevoked agent. */
export const requireAgent: preHandlerAsyncHookHandler = async (req) => {
  await authenticate(req, { user: false, agent: true });
};

/** preHandler: either a signed-in user or an agent. */
export const requireUserOrAgent: preHandlerAsyncHookHandler = async (req) => {
  await authenticate(req, { user: true, agent: true });
};

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
  },
  { name: 'auth', dependencies: ['cookie'] },
);
