import { Type, type Static } from '@sinclair/typebox';
import { MAX_AUDIT_PAGE, MAX_SOURCE_ALLOW_ENTRIES } from '../limits.js';
import { Timestamp, Uuid } from './common.js';

/** What the audit log records (one word each; the console shows them as they are). */
export const AuditAction = Type.Union(
  [
    'login.succeeded',
    'login.failed',
    'login.rate_limited',
    'dataset.import',
    'dataset.delete',
    'folder.create',
    'token.create',
    'token.revoke',
    'agent.revoke',
    'user.create',
    'settings.sources',
    'share.add',
    'share.remove',
    'owner.change',
    'group.create',
    'group.delete',
    'group.member_add',
    'group.member_remove',
  ].map((a) => Type.Literal(a)),
);
export type AuditAction = Static<typeof AuditAction>;

export const AuditEntry = Type.Object({
  id: Type.String({ description: 'Increasing; page with ?before=<id>' }),
  at: Timestamp,
  /** Username, `agent <id>`, or the name tried in a failed login. */
  actor: Type.String(),
  userId: Type.Union([Uuid, Type.Null()]),
  agentId: Type.Union([Uuid, Type.Null()]),
  action: AuditAction,
  target: Type.Union([Type.String(), Type.Null()]),
  /** The client's address as the manager saw it. */
  address: Type.String(),
  outcome: Type.Union([Type.Literal('ok'), Type.Literal('refused')]),
  details: Type.Record(Type.String(), Type.Unknown()),
});
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_AUDIT_PAGE, default: 50 })),
  /** Only entries older than this id (the previous page's `next`). */
  before: Type.Optional(Type.String({ pattern: '^[0-9]{1,19}$' })),
});
export type AuditQuery = Static<typeof AuditQuery>;

export const AuditPage = Type.Object({
  entries: Type.Array(AuditEntry),
  /** `before` for the next (older) page; null on the last page. */
  next: Type.Union([Type.String(), Type.Null()]),
});
export type AuditPage = Static<typeof AuditPage>;

/** The admin's source allow list (hosts and CIDRs; see FREELOADER_SOURCE_ALLOW). */
export const SourceAllowUpdate = Type.Object({
  allow: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
    maxItems: MAX_SOURCE_ALLOW_ENTRIES,
  }),
});
export type SourceAllowUpdate = Static<typeof SourceAllowUpdate>;

export const SourceAllowView = Type.Object({
  /** The admin's entries (this setting). */
  allow: Type.Array(Type.String()),
  /** Entries from FREELOADER_SOURCE_ALLOW on the manager, fixed until it restarts. */
  fromEnvironment: Type.Array(Type.String()),
});
export type SourceAllowView = Static<typeof SourceAllowView>;
