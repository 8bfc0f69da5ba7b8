import { Type, type Static } from '@sinclair/typebox';
import { Bytes, Timestamp, Uuid } from './common.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);

/**
 * `GET /api/v1/principals`: display names of users and agents, so the console shows
 * "alice" or "lab-pc-3" where the wire carries a UUID (client rates, patch sessions, donors).
 */
export const PrincipalView = Type.Object({
  id: Uuid,
  name: Type.String(),
  kind: Type.Union([Type.Literal('user'), Type.Literal('agent')]),
});
export type PrincipalView = Static<typeof PrincipalView>;

/** `POST /api/v1/datasets/:id/cancel` and `/retry`: what the dataset became. */
export const ImportControlResult = Type.Object({
  datasetId: Uuid,
  state: Type.Union([Type.Literal('failed'), Type.Literal('importing'), Type.Literal('ready')]),
  /** On retry, the dataset's new id (a retry is a fresh import under the same path). */
  previousDatasetId: Type.Optional(Uuid),
});
export type ImportControlResult = Static<typeof ImportControlResult>;

/** One failed job: when, on which donor, and what it said. */
export const FailedAttempt = Type.Object({
  jobId: Uuid,
  kind: Type.String(),
  datasetId: Nullable(Uuid),
  datasetPath: Nullable(Type.String()),
  agentId: Nullable(Uuid),
  agentName: Nullable(Type.String()),
  error: Type.String(),
  at: Timestamp,
});
export type FailedAttempt = Static<typeof FailedAttempt>;

/** `GET /api/v1/transfers/failures` filters. */
export const FailedAttemptQuery = Type.Object({
  datasetId: Type.Optional(Uuid),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
});
export type FailedAttemptQuery = Static<typeof FailedAttemptQuery>;

/** Why the cache cut a dataset. */
export const EvictionReason = Type.Union([
  /** An import needed the room (`forPath`, `forUserId` name it). */
  Type.Literal('import'),
  /** The periodic sweep above the high watermark. */
  Type.Literal('watermark'),
  /** An admin cut it by hand (`PUT /datasets/:id/cached`). */
  Type.Literal('admin'),
]);
export type EvictionReason = Static<typeof EvictionReason>;

/** One trim, eviction or extension, with what caused it (`GET /api/v1/cache/evictions`). */
export const EvictionLogEntry = Type.Object({
  id: Type.Integer(),
  kind: Type.Union([Type.Literal('trim'), Type.Literal('evict'), Type.Literal('extend')]),
  datasetId: Nullable(Uuid),
  /** The cut dataset's path when it was cut (it may be gone since). */
  datasetPath: Nullable(Type.String()),
  bytes: Bytes,
  at: Timestamp,
  /** Null for cuts recorded before reasons were. */
  reason: Nullable(EvictionReason),
  forDatasetId: Nullable(Uuid),
  forPath: Nullable(Type.String()),
  forUserId: Nullable(Uuid),
  forUserName: Nullable(Type.String()),
});
export type EvictionLogEntry = Static<typeof EvictionLogEntry>;

export const EvictionLogQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
});
export type EvictionLogQuery = Static<typeof EvictionLogQuery>;

/**
 * Series the manager samples into PostgreSQL: a donor's used bytes, serving rate (bytes/s)
 * and liveness (1 live, 0 not: averaged, the fraction of time up); a dataset's import rate
 * (bytes/s); and the cluster's summed import rate (no subject).
 */
export const HistorySeries = Type.Union([
  Type.Literal('donor_used'),
  Type.Literal('donor_serving'),
  Type.Literal('donor_up'),
  Type.Literal('dataset_rate'),
  Type.Literal('import_rate'),
]);
export type HistorySeries = Static<typeof HistorySeries>;

/** `GET /api/v1/history?series=&subject=&sinceS=` */
export const HistoryQuery = Type.Object({
  series: HistorySeries,
  /** A donor or dataset id; omitted: every subject of the series. */
  subject: Type.Optional(Uuid),
  /** How far back (seconds); default one day, at most 30 days. */
  sinceS: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 * 24 * 3600 })),
});
export type HistoryQuery = Static<typeof HistoryQuery>;

/** One sampled value; `resolutionS` 0 is a raw sample, else the width of an averaged bucket. */
export const HistoryPoint = Type.Object({
  at: Timestamp,
  value: Type.Number(),
  resolutionS: Type.Integer({ minimum: 0 }),
});
export type HistoryPoint = Static<typeof HistoryPoint>;

export const HistoryResponse = Type.Object({
  series: HistorySeries,
  /** Seconds between raw samples, so a chart can tell a gap from the sampling step. */
  sampleIntervalS: Type.Number(),
  subjects: Type.Array(Type.Object({ subject: Nullable(Uuid), points: Type.Array(HistoryPoint) })),
});
export type HistoryResponse = Static<typeof HistoryResponse>;
