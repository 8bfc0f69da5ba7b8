import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AuditAction } from '@freeloader/protocol';
import { redactUri } from '@freeloader/sources';
import type { AuditRecord } from '../repositories/audit.js';
import { wasRefusedAsMissing } from './access.js';

type Body = Record<string, unknown> | undefined;
type Params = Record<string, string> | undefined;
type Query = Record<string, string> | undefined;

interface Audited {
  action: AuditAction;
  /** What was acted on, from the request (never a secret). */
  target: (params: Params, body: Body, query: Query) => string | null;
  details?: (body: Body, query: Query) => Record<string, unknown>;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * The routes the audit log records, by method and route pattern. One table instead of a call in
 * every handler: a route added later is audited by adding its line here.
 */
const AUDITED: Record<string, Audited> = {
  'POST /api/v1/datasets': {
    action: 'dataset.import',
    target: (_p, b) => str(b?.name) ?? redactUri(str(b?.uri) ?? ''),
    details: (b) => ({ uri: redactUri(str(b?.uri) ?? '') }),
  },
  // Audited for its refusals (may not create there, a hidden name taken), as imports are.
  'POST /api/v1/folders': { action: 'folder.create', target: (_p, b) => str(b?.path) },
  'DELETE /api/v1/datasets/:id': { action: 'dataset.delete', target: (p) => p?.id ?? null },
  'POST /api/v1/tokens': {
    action: 'token.create',
    target: (_p, b) => str(b?.note),
    details: (b) => ({ maxUses: b?.maxUses ?? 1, ttlSeconds: b?.ttlSeconds ?? null }),
  },
  'DELETE /api/v1/tokens/:id': { action: 'token.revoke', target: (p) => p?.id ?? null },
  'DELETE /api/v1/agents/:id': { action: 'agent.revoke', target: (p) => p?.id ?? null },
  'POST /api/v1/users': {
    action: 'user.create',
    target: (_p, b) => str(b?.username),
    details: (b) => ({ role: b?.role ?? 'scientist' }),
  },
  'PUT /api/v1/shares': {
    action: 'share.add',
    target: (_p, b) => str(b?.path),
    details: (b) => ({ with: str(b?.group) ?? 'site', manage: b?.manage === true }),
  },
  'DELETE /api/v1/shares': {
    action: 'share.remove',
    target: (_p, _b, q) => str(q?.path),
    details: (_b, q) => ({ with: str(q?.group) ?? 'site' }),
  },
  'PUT /api/v1/owner': {
    action: 'owner.change',
    target: (_p, b) => str(b?.path),
    details: (b) => ({ to: str(b?.username) }),
  },
  'POST /api/v1/groups': { action: 'group.create', target: (_p, b) => str(b?.name) },
  'DELETE /api/v1/groups/:name': { action: 'group.delete', target: (p) => p?.name ?? null },
  'PUT /api/v1/groups/:name/members/:username': {
    action: 'group.member_add',
    target: (p) => (p ? `${p.name}/${p.username}` : null),
    details: (b) => ({ manager: b?.manager === true }),
  },
  'DELETE /api/v1/groups/:name/members/:username': {
    action: 'group.member_remove',
    target: (p) => (p ? `${p.name}/${p.username}` : null),
  },
  'PUT /api/v1/settings/sources': {
    action: 'settings.sources',
    target: () => 'source allow list',
    details: (b) => ({ allow: b?.allow ?? [] }),
  },
};

const LOGIN = 'POST /api/v1/auth/login';

/**
 * The audit row for a finished request, or null when it is not audited: audited routes when
 * they succeeded (2xx; a dry-run import answers 200 and is not an import) or were refused to
 * an authenticated caller (403, or a 404 that hides an item the caller may not read:
 * `refused`), and every login (succeeded, failed, rate-limited).
 */
export function auditRecordOf(
  key: string,
  status: number,
  req: Pick<FastifyRequest, 'user' | 'agent' | 'ip' | 'body' | 'params'> &
    Partial<Pick<FastifyRequest, 'query'>>,
  refused = status === 403,
): AuditRecord | null {
  const body = (req.body ?? undefined) as Body;
  const query = (req.query ?? undefined) as Query;
  const who = {
    userId: req.user?.id ?? null,
    agentId: req.agent?.id ?? null,
    address: req.ip,
  };
  if (key === LOGIN) {
    const action: AuditAction | null =
      status === 200
        ? 'login.succeeded'
        : status === 401
          ? 'login.failed'
          : status === 429
            ? 'login.rate_limited'
            : null;
    if (action === null) return null;
    const name = str(body?.username) ?? '';
    const outcome = status === 200 ? 'ok' : 'refused';
    return { ...who, actor: name, action, target: name, outcome };
  }
  const audited = AUDITED[key];
  if (!audited || !(status === 201 || status === 200 || refused)) return null;
  if (key === 'POST /api/v1/datasets' && status === 200) return null;
  const actor = req.user?.username ?? (req.agent ? `agent ${req.agent.id}` : 'anonymous');
  return {
    ...who,
    actor,
    action: audited.action,
    target: audited.target(req.params as Params, body, query),
    outcome: refused ? 'refused' : 'ok',
    details: audited.details?.(body, query) ?? {},
  };
}

/** Writes an audit row after every audited request; a failed write is logged, never thrown. */
export default fp(
  async (app) => {
    // A callback hook that returns at once for routes never audited: heartbeats and job
    // channels are nearly every request, and an async hook cost each one a promise.
    app.addHook('onResponse', (req, reply, done) => {
      const key = `${req.method} ${req.routeOptions.url ?? ''}`;
      if (key !== LOGIN && !Object.hasOwn(AUDITED, key)) return done();
      const refused = reply.statusCode === 403 || wasRefusedAsMissing(req);
      const record = auditRecordOf(key, reply.statusCode, req, refused);
      if (!record) return done();
      app.auditRepo.record(record).then(
        () => done(),
        (err: unknown) => {
          req.log.error({ err, action: record.action }, 'audit log write failed');
          done();
        },
      );
    });
  },
  { name: 'audit-hook', dependencies: ['audit-repo', 'auth'] },
);
