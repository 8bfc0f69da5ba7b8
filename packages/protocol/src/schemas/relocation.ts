import { Type, type Static } from '@sinclair/typebox';
import { Bytes, Uuid } from './common.js';

/**
 * An agent changes its donated space (`POST /api/v1/agents/me/quota`). Raising is immediate;
 * lowering below what the manager's ledger says the agent holds makes the manager move the
 * excess elsewhere (relocate jobs for this agent) or evict datasets whose source still answers.
 */
export const QuotaChangeRequest = Type.Object({
  quotaBytes: Bytes,
  /**
   * The change's version: the agent's clock in ms when it set the quota, above every version it
   * sent before (its heartbeats then carry it). Absent from old agents.
   */
  quotaVersion: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type QuotaChangeRequest = Static<typeof QuotaChangeRequest>;

export const QuotaChangeResponse = Type.Object({
  quotaBytes: Bytes,
  /** Bytes held beyond the new quota when it was set (0 when it fits). */
  excessBytes: Bytes,
  /** One relocate job per dataset moved; the agent runs them. */
  relocating: Type.Array(
    Type.Object({ datasetId: Uuid, jobId: Uuid, bytes: Bytes, targets: Type.Integer() }),
  ),
  /** Datasets deleted from the cache (their source answered a probe, so nothing is lost). */
  evicting: Type.Array(Type.Object({ datasetId: Uuid, bytes: Bytes })),
  /** Excess that could neither move nor be evicted; it stays until space appears. */
  unplacedBytes: Bytes,
});
export type QuotaChangeResponse = Static<typeof QuotaChangeResponse>;

/** Morsels of one dataset to push to one donor. */
export const RelocationMove = Type.Object({
  to: Uuid,
  url: Type.String(),
  morsels: Type.Array(Type.Integer({ minimum: 0 })),
});
export type RelocationMove = Static<typeof RelocationMove>;

/** Payload of a `relocate` job: push these morsels, then ask the manager to commit. */
export const RelocateJobPayload = Type.Object({
  datasetId: Uuid,
  morselSize: Type.Integer({ minimum: 1 }),
  moves: Type.Array(RelocationMove),
  /** Write capability for the dataset, audience = the target donors. */
  writeCapability: Type.String(),
  /** Keep the moved morsels this long after the commit: readers with older maps still find them. */
  graceMs: Type.Integer({ minimum: 0 }),
});
export type RelocateJobPayload = Static<typeof RelocateJobPayload>;

export const RelocationCommitResponse = Type.Object({
  datasetId: Uuid,
  movedMorsels: Type.Integer({ minimum: 0 }),
  movedBytes: Bytes,
});
export type RelocationCommitResponse = Static<typeof RelocationCommitResponse>;
