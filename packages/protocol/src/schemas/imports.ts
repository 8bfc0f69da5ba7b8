import { Type, type Static } from '@sinclair/typebox';
import { MAX_HASHES_PER_QUERY, MAX_MORSEL_SIZE, MAX_REPLICAS, MIN_MORSEL_SIZE } from '../limits.js';
import { Bytes, NamespacePath, Uri, Uuid } from './common.js';
import { DatasetView, DonorEndpoint, ExtentSchema } from './datasets.js';
import { PlacementPolicy } from './placement-policy.js';

/** Widest stripe a dataset may ask for (donors read in parallel). */
export const MAX_STRIPE_WIDTH = 64;
/** Largest stripe size (consecutive morsels per donor). */
export const MAX_STRIPE_SIZE = 1024;

export { PlacementPolicy } from './placement-policy.js';

/** `POST /api/v1/datasets`: import a dataset from a URI. */
export const ImportRequest = Type.Object({
  uri: Uri,
  /** Namespace path; defaults to the URI's file name at the root. */
  name: Type.Optional(NamespacePath),
  /** Stripe width W: donors read in parallel (default: all live donors, up to 8). */
  width: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_STRIPE_WIDTH })),
  /** Stripe size S in morsels (default 1). */
  stripeSize: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_STRIPE_SIZE })),
  morselSize: Type.Optional(Type.Integer({ minimum: MIN_MORSEL_SIZE, maximum: MAX_MORSEL_SIZE })),
  /**
   * Placement policy. Default: predictive when the manager has delivery-rate history for the
   * candidate donors, else round-robin. `asymmetric` needs `hostAgentId`.
   */
  policy: Type.Optional(PlacementPolicy),
  /** Asymmetric: the importing workstation's own agent, which keeps part of the dataset. */
  hostAgentId: Type.Optional(Uuid),
  /**
   * Asymmetric: fraction of the morsels to keep on the host (0…1), overriding the throughput
   * model's choice (for experiments like the seed's ratio sweep).
   */
  localShare: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  /**
   * Copies of each morsel, each on a different donor (1…MAX_REPLICAS; default the manager's
   * REPLICAS_DEFAULT). Copy 0 comes from the source; the other copies fan out donor to donor
   * (the source only as fallback), so an import costs about 1× the WAN bytes.
   */
  replicas: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REPLICAS })),
  /**
   * Target availability of each morsel (0 < p < 1, e.g. 0.999): the manager picks the smallest n
   * the availability model gives it with measured donor failure and repair rates. Not together
   * with `replicas`.
   */
  availability: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
  /**
   * Seal morsels with a dataset key so donors store ciphertext only (default true). `false` is
   * for public data only: it saves the client's AES-GCM work (see the README's numbers).
   */
  encrypt: Type.Optional(Type.Boolean()),
  /** Only probe the source and plan; create nothing. */
  dryRun: Type.Optional(Type.Boolean()),
});
export type ImportRequest = Static<typeof ImportRequest>;

export const SourceProbe = Type.Object({
  uri: Type.String(),
  size: Bytes,
  etag: Type.Union([Type.String(), Type.Null()]),
  lastModified: Type.Union([Type.String(), Type.Null()]),
  acceptsRanges: Type.Boolean(),
});
export type SourceProbe = Static<typeof SourceProbe>;

/**
 * What an agent receives in an `import` job. `ranged`: fetch the morsels the extents assign to
 * you from the source by Range (only the extents naming you and only your endpoint are sent). `stream`: the source has no Range support, so you read it whole
 * and PUT each morsel to its donor (yourself included) with `writeCapability`.
 */
export const ImportJobPayload = Type.Object({
  mode: Type.Union([Type.Literal('ranged'), Type.Literal('stream')]),
  source: SourceProbe,
  morselSize: Type.Integer({ minimum: MIN_MORSEL_SIZE, maximum: MAX_MORSEL_SIZE }),
  extents: Type.Array(ExtentSchema),
  donors: Type.Array(DonorEndpoint),
  /**
   * Write capability for the donors (the streaming donor PUTs each morsel to its holders).
   * Ranged jobs carry none: their donor fetches and stores only its own morsels.
   */
  writeCapability: Type.Optional(Type.String()),
  /**
   * Set when the job extends a ready dataset's cached prefix (issue 7): morsels below this index
   * are cached and being read, so a failed job frees only the morsels it was given.
   */
  extendsFrom: Type.Optional(Type.Integer({ minimum: 0 })),
  /**
   * Set when the dataset has copies ≥ 1 (issue 15): a donor holding copy ≥ 1 of a morsel
   * fetches it from the donor `primaries` name for copy 0, once the manager has that morsel's
   * hash (GET /jobs/:id/hashes), verifies it against that hash and falls back to the source.
   */
  fanOut: Type.Optional(
    Type.Object({
      /** Copy 0's extents: who imports each morsel from the source. */
      primaries: Type.Array(ExtentSchema),
      /** Endpoints of the donors `primaries` names. */
      donors: Type.Array(DonorEndpoint),
      /** Read capability for the dataset on those donors. */
      readCapability: Type.String(),
    }),
  ),
  /**
   * The dataset's AES-256 key (base64) when it is encrypted: seal each morsel before storing it.
   * Added by the manager when the job is claimed, never stored in the job row.
   */
  dataKey: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' })),
});
export type ImportJobPayload = Static<typeof ImportJobPayload>;

/** `GET /api/v1/jobs/:id/hashes`: the import's morsel hashes the manager holds in a range. */
export const ImportHashesQuery = Type.Object({
  first: Type.Integer({ minimum: 0 }),
  count: Type.Integer({ minimum: 1, maximum: MAX_HASHES_PER_QUERY }),
});
export type ImportHashesQuery = Static<typeof ImportHashesQuery>;

/** Hex SHA-256 of morsels first…first+n−1; '' where no donor has reported the morsel yet. */
export const ImportHashesResponse = Type.Object({
  first: Type.Integer({ minimum: 0 }),
  hashes: Type.Array(Type.Union([Type.Literal(''), Type.String({ pattern: '^[0-9a-f]{64}$' })])),
  /**
   * Donors that died during this import (their import jobs were given up on): morsels whose
   * copy 0 the job's payload names on one of them are fetched from the source at once.
   */
  lost: Type.Optional(Type.Array(Uuid)),
});
export type ImportHashesResponse = Static<typeof ImportHashesResponse>;

/**
 * SHA-256 of one morsel's stored bytes as an agent reports it during import, and for an
 * encrypted dataset the AES-GCM tag it sealed the morsel with (hex).
 */
export const MorselHash = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  tag: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32}$' })),
});
export type MorselHash = Static<typeof MorselHash>;

/** `POST /api/v1/datasets` answer: the new dataset (null on a dry run), the probe and the plan. */
export const ImportResponse = Type.Object({
  dataset: Type.Union([DatasetView, Type.Null()]),
  probe: SourceProbe,
  plan: Type.Object({
    width: Type.Integer(),
    stripeSize: Type.Integer(),
    morsels: Type.Integer(),
    donors: Type.Integer(),
    /** Bytes cached: the whole dataset, or its model prefix when the cache is full. */
    cacheBytes: Type.Optional(Bytes),
    /** The placement policy used (after the default was resolved). */
    policy: Type.Optional(PlacementPolicy),
    /** Asymmetric: fraction of the morsels placed on the host. */
    localShare: Type.Optional(Type.Number()),
    /** Why this policy / width: e.g. "rate history for 4 of 4 donors", "widened: 1 owner active". */
    reason: Type.Optional(Type.String()),
    /** Copies of each morsel wanted (n) and why that n ("default", "as requested", the model). */
    replicas: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REPLICAS })),
    replicasReason: Type.Optional(Type.String()),
    /** Copies placed now: fewer than `replicas` when too few donors can take one (repair tops up). */
    placedCopies: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_REPLICAS })),
  }),
});
export type ImportResponse = Static<typeof ImportResponse>;
