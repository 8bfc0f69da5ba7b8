import { Type, type Static } from '@sinclair/typebox';
import { MAX_AGENTS_PAGE, MAX_AGENT_NAME_LENGTH, MAX_HEARTBEAT_JOBS } from '../limits.js';
import { Bytes, Timestamp, Uuid } from './common.js';
import { AgentDiagnostics } from './diagnostics.js';
import { ThrottleReasons } from './throttle.js';

export const AgentState = Type.Union([
  Type.Literal('live'),
  Type.Literal('stale'),
  Type.Literal('dead'),
  Type.Literal('revoked'),
]);
export type AgentState = Static<typeof AgentState>;

export const ThrottleState = Type.Union([
  Type.Literal('idle'),
  Type.Literal('active'),
  Type.Literal('contended'),
  Type.Literal('paused'),
  Type.Literal('unknown'),
]);
export type ThrottleState = Static<typeof ThrottleState>;

/** Soft state an agent sends every HEARTBEAT_INTERVAL_MS. */
export const Heartbeat = Type.Object({
  quotaBytes: Bytes,
  /**
   * When the agent last set `quotaBytes` (its own clock, ms; see QuotaChangeRequest). A heartbeat
   * built before a quota change can reach the manager after it: the manager keeps the quota of
   * the higher version. Absent from old agents (their quota is taken as sent).
   */
  quotaVersion: Type.Optional(Type.Integer({ minimum: 0 })),
  usedBytes: Bytes,
  freeBytes: Bytes,
  /** Bytes/s served to clients over the last interval. */
  servingRate: Type.Number({ minimum: 0 }),
  /** Machine CPU load 0..1, when known. */
  cpuLoad: Type.Optional(Type.Number({ minimum: 0 })),
  throttle: Type.Optional(ThrottleState),
  /** Effective serving cap in bytes/s (0 = unlimited). */
  rateCap: Type.Optional(Type.Number({ minimum: 0 })),
  /** Why the governor is in `throttle` ('owner active', 'cpu 0.93 > 0.75', …); absent from old agents. */
  throttleReasons: Type.Optional(ThrottleReasons),
  /** The agent's morsel service URL (it may change across restarts). */
  url: Type.Optional(Type.String({ maxLength: 512 })),
  version: Type.Optional(Type.String({ maxLength: 64 })),
  /** The join-time probe of disk and network rates, once it has run. */
  diagnostics: Type.Optional(AgentDiagnostics),
  /** Jobs the agent is running now: the manager renews their leases (see JOB_LEASE_MS). */
  runningJobs: Type.Optional(Type.Array(Uuid, { maxItems: MAX_HEARTBEAT_JOBS })),
  /**
   * A store write hit ENOSPC: the disk is full whatever the quota says (freeBytes is then 0).
   * The manager places nothing new on the donor until a heartbeat says otherwise.
   */
  diskFull: Type.Optional(Type.Boolean()),
});
export type Heartbeat = Static<typeof Heartbeat>;

export const HeartbeatResponse = Type.Object({
  heartbeatIntervalMs: Type.Integer(),
  /**
   * Hosts and CIDRs sources may reach although loopback, private … (the manager's
   * FREELOADER_SOURCE_ALLOW plus the admin's setting); the agent adds its own environment's.
   */
  sourceAllow: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
});
export type HeartbeatResponse = Static<typeof HeartbeatResponse>;

/**
 * A donor's failure class (issue 15): `offline` is silent past the stale threshold (its copies
 * are not read, not repaired yet), `lost` silent past REPAIR_AFTER_MS (its copies are being
 * re-created), `leaving` asked to go (its copies move first, then it is released).
 */
export const FailureClass = Type.Union([
  Type.Literal('online'),
  Type.Literal('offline'),
  Type.Literal('lost'),
  Type.Literal('leaving'),
]);
export type FailureClass = Static<typeof FailureClass>;

export const AgentView = Type.Object({
  id: Uuid,
  name: Type.String(),
  url: Type.String(),
  state: AgentState,
  failureClass: Type.Optional(FailureClass),
  bandwidthOnly: Type.Boolean(),
  quotaBytes: Bytes,
  usedBytes: Bytes,
  freeBytes: Bytes,
  reservedBytes: Bytes,
  servingRate: Type.Number(),
  throttle: Type.Optional(ThrottleState),
  /** Effective serving cap in bytes/s from the last heartbeat (0 = unlimited). */
  rateCap: Type.Optional(Type.Number({ minimum: 0 })),
  /** Why, from the last heartbeat (see {@link Heartbeat}). */
  throttleReasons: Type.Optional(ThrottleReasons),
  /** Disk and network rates the agent measured when it joined. */
  diagnostics: Type.Optional(AgentDiagnostics),
  /** Milliseconds since the last heartbeat (null when never seen since the manager started). */
  lastHeartbeatAgoMs: Type.Union([Type.Integer(), Type.Null()]),
  enrolledAt: Timestamp,
});
export type AgentView = Static<typeof AgentView>;

/**
 * `GET /agents` query. With any of these the answer is an {@link AgentPage}; without, every
 * agent as an array (the CLI's listing). Pages are ordered by name, then id.
 */
export const AgentListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_AGENTS_PAGE })),
  /** `nextCursor` of the previous page. */
  cursor: Type.Optional(Type.String({ maxLength: 1024 })),
  state: Type.Optional(AgentState),
  /** Case-insensitive substring of the name, URL or id. */
  q: Type.Optional(Type.String({ maxLength: MAX_AGENT_NAME_LENGTH })),
});
export type AgentListQuery = Static<typeof AgentListQuery>;

/** One page of donors, with how many match the search in each state (for the page's header). */
export const AgentPage = Type.Object({
  agents: Type.Array(AgentView),
  /** Pass as `cursor` for the next page; null on the last. */
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  /** Agents matching `q` and `state`, over all pages. */
  total: Type.Integer({ minimum: 0 }),
  /** Agents matching `q` per state (whatever `state` asks for). */
  counts: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
});
export type AgentPage = Static<typeof AgentPage>;
