import { Type, type Static } from '@sinclair/typebox';
import { MAX_FAULTS_PER_REPORT } from '../limits.js';
import { Uuid } from './common.js';

/** Why a stored copy is bad: wrong bytes (hash mismatch), or bytes gone (file missing or short). */
export const FaultReason = Type.Union([Type.Literal('corrupt'), Type.Literal('missing')]);
export type FaultReason = Static<typeof FaultReason>;

/** One morsel a donor found bad in its own store. */
export const AgentFault = Type.Object({
  datasetId: Uuid,
  morsel: Type.Integer({ minimum: 0 }),
  reason: FaultReason,
  /** `scrub`: the background re-hash; `startup`: the data file was missing or short at open. */
  reportedBy: Type.Union([Type.Literal('scrub'), Type.Literal('startup')]),
});
export type AgentFault = Static<typeof AgentFault>;

/** `POST /agents/me/faults`: morsels the reporting donor dropped, batched. */
export const AgentFaultReport = Type.Object({
  faults: Type.Array(AgentFault, { minItems: 1, maxItems: MAX_FAULTS_PER_REPORT }),
});
export type AgentFaultReport = Static<typeof AgentFaultReport>;

/** `POST /datasets/:id/faults`: a client read these morsels from these donors with a bad hash. */
export const ClientFaultReport = Type.Object({
  faults: Type.Array(Type.Object({ morsel: Type.Integer({ minimum: 0 }), donor: Uuid }), {
    minItems: 1,
    maxItems: 64,
  }),
});
export type ClientFaultReport = Static<typeof ClientFaultReport>;

/** How many reported faults became fault rows, and how many named copies the donor does not hold. */
export const FaultReportResult = Type.Object({
  recorded: Type.Integer({ minimum: 0 }),
  ignored: Type.Integer({ minimum: 0 }),
});
export type FaultReportResult = Static<typeof FaultReportResult>;
