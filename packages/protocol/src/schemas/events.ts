import { Type, type Static } from '@sinclair/typebox';
import { Bytes, Uuid } from './common.js';

/** Events on the manager's live stream (`GET /api/v1/events`, server-sent events). */
export const AgentEvent = Type.Object({
  type: Type.Literal('agent'),
  agentId: Uuid,
  state: Type.String(),
});

export const TransferEvent = Type.Object({
  type: Type.Literal('transfer'),
  jobId: Uuid,
  datasetId: Type.Union([Uuid, Type.Null()]),
  agentId: Type.Union([Uuid, Type.Null()]),
  state: Type.String(),
  doneBytes: Bytes,
  totalBytes: Bytes,
  rate: Type.Number(),
  /** Seconds left at the current rate, when known. */
  etaSeconds: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const DatasetEvent = Type.Object({
  type: Type.Literal('dataset'),
  datasetId: Uuid,
  state: Type.String(),
});

/** Copies of morsels found bad (scrub, start-up check or a client's bad hash): repair reacts. */
export const FaultEvent = Type.Object({
  type: Type.Literal('fault'),
  datasetId: Uuid,
  agentId: Uuid,
  /** Copies newly recorded (or refreshed) as bad by this report. */
  morsels: Type.Integer({ minimum: 0 }),
  reason: Type.String(),
  reportedBy: Type.String(),
});

export const FreeLoaderEvent = Type.Union([AgentEvent, TransferEvent, DatasetEvent, FaultEvent]);
export type FreeLoaderEvent = Static<typeof FreeLoaderEvent>;
