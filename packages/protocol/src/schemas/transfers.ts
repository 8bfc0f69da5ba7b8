import { Type, type Static } from '@sinclair/typebox';
import { Bytes, Timestamp, Uuid } from './common.js';
import { ThrottleState } from './agents.js';
import { JobKind, JobState } from './jobs.js';
import { ThrottleReasons } from './throttle.js';

/** One job seen as a progress row (`GET /api/v1/transfers`). */
export const TransferView = Type.Object({
  jobId: Uuid,
  kind: JobKind,
  state: JobState,
  datasetId: Type.Union([Uuid, Type.Null()]),
  agentId: Type.Union([Uuid, Type.Null()]),
  doneBytes: Bytes,
  totalBytes: Bytes,
  /** Bytes/s at the last progress report. */
  rate: Type.Number(),
  /** Seconds left at the current rate; null when not running or no rate yet. */
  etaSeconds: Type.Union([Type.Number(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  /**
   * The serving governor of the agent running the job, from its last heartbeat (running jobs
   * only): a throttled donor moves its import bytes at `rateCap` too.
   */
  throttle: Type.Optional(ThrottleState),
  /** Why ('cpu 0.93 > 0.75', …). */
  throttleReasons: Type.Optional(ThrottleReasons),
  /** Its cap in bytes/s (0 = unlimited). */
  rateCap: Type.Optional(Type.Number({ minimum: 0 })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type TransferView = Static<typeof TransferView>;

/** `GET /api/v1/transfers` filters; the answer is a `TransferView[]`, most recent first. */
export const TransferQuery = Type.Object({
  /** Only jobs in this state. */
  state: Type.Optional(JobState),
  /** Only jobs of this dataset. */
  datasetId: Type.Optional(Uuid),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
export type TransferQuery = Static<typeof TransferQuery>;
