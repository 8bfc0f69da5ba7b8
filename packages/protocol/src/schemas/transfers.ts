import { Type, type Static } from '@sinclair/typebox';
import { Bytes, Timestamp, Uuid } from './common.js';
import { JobKind, JobState, JobView } from './jobs.js';

/** `POST /api/v1/jobs/claim` → the jobs now running on the calling agent (possibly none). */
export const JobClaimResponse = Type.Object({ jobs: Type.Array(JobView) });
export type JobClaimResponse = Static<typeof JobClaimResponse>;

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
  error: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type TransferView = Static<typeof TransferView>;

export const TransferQuery = Type.Object({
  /** Only jobs in this state. */
  state: Type.Optional(JobState),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
export type TransferQuery = Static<typeof TransferQuery>;

export const TransferList = Type.Object({ transfers: Type.Array(TransferView) });
export type TransferList = Static<typeof TransferList>;
