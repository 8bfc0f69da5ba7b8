import { Type, type Static } from '@sinclair/typebox';
import { Bytes, Timestamp, Uuid } from './common.js';

export const JobKind = Type.Union([
  Type.Literal('import'),
  Type.Literal('patch'),
  Type.Literal('delete'),
  Type.Literal('relocate'),
]);
export type JobKind = Static<typeof JobKind>;

export const JobState = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('done'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);
export type JobState = Static<typeof JobState>;

export const JobView = Type.Object({
  id: Uuid,
  kind: JobKind,
  state: JobState,
  datasetId: Type.Union([Uuid, Type.Null()]),
  agentId: Type.Union([Uuid, Type.Null()]),
  /** Kind-specific instructions (e.g. which morsels to import from which URI). */
  payload: Type.Record(Type.String(), Type.Unknown()),
  doneBytes: Bytes,
  totalBytes: Bytes,
  error: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Integer({ minimum: 0 }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type JobView = Static<typeof JobView>;

export const JobClaimRequest = Type.Object({
  kinds: Type.Optional(Type.Array(Type.String())),
  max: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
  /** First claim after the agent restarted: also return the jobs it was running. */
  resume: Type.Optional(Type.Boolean()),
});

export const JobProgress = Type.Object({
  doneBytes: Bytes,
  /** Bytes/s over the last report interval. */
  rate: Type.Optional(Type.Number({ minimum: 0 })),
  /** Hashes of morsels stored since the last report (import jobs). */
  hashes: Type.Optional(
    Type.Array(
      Type.Object({
        index: Type.Integer({ minimum: 0 }),
        sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
      }),
      { maxItems: 8192 },
    ),
  ),
  /** Per-donor bytes stored so far (stream imports distribute to several donors). */
  perDonor: Type.Optional(Type.Record(Type.String(), Bytes)),
});
export type JobProgress = Static<typeof JobProgress>;

export const JobFinish = Type.Object({
  state: Type.Union([Type.Literal('done'), Type.Literal('failed')]),
  error: Type.Optional(Type.String({ maxLength: 2000 })),
  errorCode: Type.Optional(Type.String({ maxLength: 64 })),
  result: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type JobFinish = Static<typeof JobFinish>;
