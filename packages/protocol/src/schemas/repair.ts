import { Type, type Static } from '@sinclair/typebox';
import { Bytes, Timestamp, Uuid } from './common.js';

/** One morsel a repair job fetches: where it may come from, and the hash it must have. */
export const RepairMorsel = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  /** Bytes of this morsel (the last one of a dataset may be short). */
  length: Type.Integer({ minimum: 1 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  /** Morsel-service URLs of live donors holding a good copy, in the order to try them. */
  donors: Type.Array(Type.String()),
});
export type RepairMorsel = Static<typeof RepairMorsel>;

/** A unit of repair: committed on its own once all its morsels are stored and verified. */
export const RepairJobUnit = Type.Object({
  unitId: Type.String({ pattern: '^[0-9]+$' }),
  morsels: Type.Array(RepairMorsel),
});
export type RepairJobUnit = Static<typeof RepairJobUnit>;

/**
 * Payload of a `repair` job, run by the destination donor: fetch each unit's morsels from the
 * donors named (read capability) or else the source, verify their hashes, store them, then ask
 * the manager to commit the units stored so far (`POST /repairs/:jobId/commit`).
 */
export const RepairJobPayload = Type.Object({
  datasetId: Uuid,
  morselSize: Type.Integer({ minimum: 1 }),
  /** Read capability for the dataset, audience = the donors named. */
  readCapability: Type.String(),
  /** The durable copy, for morsels no live donor holds (and as a last resort). */
  source: Type.Optional(
    Type.Object({
      uri: Type.String(),
      size: Bytes,
      etag: Type.Union([Type.String(), Type.Null()]),
      lastModified: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  /** This job's cap (bytes/s): b, or B's share when it reads from the source. */
  rateBytesPerS: Type.Number({ minimum: 1 }),
  /** Donors this job reads from (the scheduler lets each donor serve one repair at a time). */
  sourceAgents: Type.Array(Uuid),
  /** Some morsels have no live copy: this job reads them from the source (cap B). */
  seeds: Type.Boolean(),
  units: Type.Array(RepairJobUnit),
  /**
   * The dataset's AES-256 key (base64) when it is encrypted, so morsels re-read from the source
   * are sealed exactly as the import sealed them. Added when the job is claimed, never stored.
   */
  dataKey: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' })),
});
export type RepairJobPayload = Static<typeof RepairJobPayload>;

/** `POST /api/v1/repairs/:jobId/commit`: units of the job whose morsels are all stored. */
export const RepairCommitRequest = Type.Object({
  unitIds: Type.Array(Type.String({ pattern: '^[0-9]{1,18}$' }), { minItems: 1, maxItems: 4096 }),
});
export type RepairCommitRequest = Static<typeof RepairCommitRequest>;

/** What the commit moved (units already committed count zero: a retry is harmless). */
export const RepairCommitResponse = Type.Object({
  units: Type.Integer({ minimum: 0 }),
  datasetId: Uuid,
  morsels: Type.Integer({ minimum: 0 }),
  bytes: Bytes,
});
export type RepairCommitResponse = Static<typeof RepairCommitResponse>;

/** Why a unit is in the repair queue. */
export const RepairReason = Type.Union([
  Type.Literal('lost'),
  Type.Literal('leaving'),
  Type.Literal('revoked'),
  Type.Literal('fault'),
  Type.Literal('missing'),
]);
export type RepairReason = Static<typeof RepairReason>;

/** `GET /api/v1/repairs`: the queue, what is moving now, and when it should be done. */
export const RepairQueueView = Type.Object({
  waitingUnits: Type.Integer({ minimum: 0 }),
  runningUnits: Type.Integer({ minimum: 0 }),
  waitingMorsels: Type.Integer({ minimum: 0 }),
  runningMorsels: Type.Integer({ minimum: 0 }),
  /** Bytes still to copy (waiting and running units). */
  bytes: Bytes,
  /** Bytes/s over the last minute of completed units. */
  rate: Type.Number({ minimum: 0 }),
  /** Seconds to empty the queue at that rate; null when nothing moves. */
  etaSeconds: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  /** Bytes repaired in the last hour. */
  doneBytesLastHour: Bytes,
  /** The silence after which a donor is lost, and where that number came from. */
  repairAfterMs: Type.Integer({ minimum: 1 }),
  repairAfterBasis: Type.Union([
    Type.Literal('configured'),
    Type.Literal('observed'),
    Type.Literal('fallback'),
  ]),
  /** Most dangerous units first. */
  units: Type.Array(
    Type.Object({
      id: Type.String(),
      datasetId: Uuid,
      copy: Type.Integer({ minimum: 0 }),
      morsels: Type.Integer({ minimum: 0 }),
      bytes: Bytes,
      liveCopies: Type.Integer({ minimum: 0 }),
      reason: RepairReason,
      fromAgent: Type.Union([Uuid, Type.Null()]),
      toAgent: Type.Union([Uuid, Type.Null()]),
      state: Type.Union([Type.Literal('waiting'), Type.Literal('running')]),
      enqueuedAt: Timestamp,
    }),
  ),
});
export type RepairQueueView = Static<typeof RepairQueueView>;

/** `POST`/`GET /api/v1/agents/me/leave`: how far a leaving donor's copies have moved. */
export const LeaveProgress = Type.Object({
  leaving: Type.Boolean(),
  /** Revoked with a zero ledger: the donor may stop and delete its store. */
  released: Type.Boolean(),
  /** Morsels of this donor placement still names, and their bytes. */
  remainingMorsels: Type.Integer({ minimum: 0 }),
  remainingBytes: Bytes,
});
export type LeaveProgress = Static<typeof LeaveProgress>;
