import { Type, type Static } from '@sinclair/typebox';
import { Bytes, NamespacePath, Timestamp, Uri, Uuid } from './common.js';
import { MorselHash, SourceProbe } from './imports.js';
import { PatchNode, SuffixPlan } from './suffix-plan.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);

/**
 * What the manager knows about one source (scheme + host[:port]): decaying averages learned from
 * imports, patches and on-demand probes. These are the model's L and R_patch (seed 002 §3.1).
 */
export const SourceStatsView = Type.Object({
  /** `scheme://host[:port]`, no credentials. */
  source: Type.String(),
  /** L: size-independent startup latency (seconds). */
  startupLatencyS: Nullable(Type.Number()),
  /** R_patch: aggregate rate of a collective download (bytes/s). */
  patchRate: Nullable(Type.Number()),
  /** Patch width the rate was observed with. */
  patchWidth: Nullable(Type.Integer()),
  /** Aggregate rate imports reached (1-morsel requests; a floor for R_patch, bytes/s). */
  importRate: Nullable(Type.Number()),
  /** A request size that reaches the source's bulk rate (bytes). */
  requestSize: Bytes,
  samples: Type.Integer({ minimum: 0 }),
  updatedAt: Timestamp,
});
export type SourceStatsView = Static<typeof SourceStatsView>;

/** `POST /api/v1/sources/measurements`: what `freeloader source probe` measured. */
export const SourceMeasurement = Type.Object({
  uri: Uri,
  latencyS: Type.Optional(Type.Number({ minimum: 0 })),
  patchRate: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  width: Type.Optional(Type.Integer({ minimum: 1 })),
  requestSize: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type SourceMeasurement = Static<typeof SourceMeasurement>;

/** R_client of one client (user or agent id; '' is every client together). */
export const ClientRateView = Type.Object({
  client: Type.String(),
  /** Decaying average in-cache read rate (bytes/s). */
  rate: Type.Number(),
  samples: Type.Integer({ minimum: 0 }),
  updatedAt: Timestamp,
});
export type ClientRateView = Static<typeof ClientRateView>;

/** `POST /api/v1/datasets/:id/patch`: ask for a suffix plan (a new patch session). */
export const SuffixPlanRequest = Type.Object({
  /** First morsel still needed (default: the first uncached one). */
  fromMorsel: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Patching nodes not to use (they failed this client). */
  exclude: Type.Optional(Type.Array(Uuid, { maxItems: 256 })),
  /** The session this one replaces (it is closed). */
  replaces: Type.Optional(Uuid),
  width: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  /** Bytes per source request (default: the source's good size; benchmarks sweep it). */
  requestSize: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type SuffixPlanRequest = Static<typeof SuffixPlanRequest>;

/** What a patching node fetches (`GET /api/v1/patch-sessions/:id`) before it starts. */
export const PatchSessionPlan = Type.Object({
  plan: SuffixPlan,
  source: SourceProbe,
  morselSize: Type.Integer({ minimum: 1 }),
  /** Lets the patching nodes PUT shuffled morsels to each other (audience: the nodes). */
  writeCapability: Type.String(),
  /** Morsels from this index on have no known hash: the patching nodes report theirs. */
  hashesFrom: Type.Integer({ minimum: 0 }),
  /**
   * An encrypted dataset's AES-256 key (base64), when there are morsels from `hashesFrom` on:
   * the nodes seal a copy of each to report the SHA-256 and tag donors would store.
   */
  dataKey: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' })),
});
export type PatchSessionPlan = Static<typeof PatchSessionPlan>;

/** `POST /api/v1/patch-sessions/:id/report`: one patching node's account of its download. */
export const PatchReport = Type.Object({
  bytes: Bytes,
  /** Seconds with a source request open (pauses for the memory budget excluded). */
  activeSeconds: Type.Number({ minimum: 0 }),
  /** Time from the first request to its first byte (milliseconds); absent if none was made. */
  latencyMs: Type.Optional(Type.Number({ minimum: 0 })),
  requests: Type.Integer({ minimum: 0 }),
  /** Morsels this node served to the client. */
  served: Type.Integer({ minimum: 0 }),
  errorCode: Type.Optional(Type.String({ maxLength: 64 })),
  error: Type.Optional(Type.String({ maxLength: 2000 })),
});
export type PatchReport = Static<typeof PatchReport>;

/** `POST /api/v1/patch-sessions/:id/hashes`: SHA-256 of patched morsels the manager lacked. */
export const PatchHashes = Type.Object({ hashes: Type.Array(MorselHash, { maxItems: 4096 }) });
export type PatchHashes = Static<typeof PatchHashes>;

export const PatchSessionView = Type.Object({
  id: Uuid,
  datasetId: Type.Union([Uuid, Type.Null()]),
  client: Type.String(),
  state: Type.Union([Type.Literal('active'), Type.Literal('done'), Type.Literal('replaced')]),
  firstMorsel: Type.Integer(),
  endMorsel: Type.Integer(),
  requestSize: Type.Integer(),
  nodes: Type.Array(PatchNode),
  bytes: Bytes,
  /** Aggregate rate from the nodes' reports (bytes/s), once any arrived. */
  rate: Nullable(Type.Number()),
  createdAt: Timestamp,
});
export type PatchSessionView = Static<typeof PatchSessionView>;

/** A dataset as the cache manages it: cached part, model prefix, pin, recency. */
export const CachedDatasetView = Type.Object({
  id: Uuid,
  path: NamespacePath,
  source: Nullable(Type.String()),
  sizeBytes: Bytes,
  cachedBytes: Bytes,
  /** What the model asks to keep cached now (bytes, whole morsels). */
  prefixBytes: Bytes,
  pinned: Type.Boolean(),
  lastAccessAt: Nullable(Timestamp),
  /** Reads (map fetches) so far. */
  reads: Type.Optional(Type.Integer({ minimum: 0 })),
  /** The cached part an extension in flight is growing to (bytes); absent when none is. */
  extendingToBytes: Type.Optional(Bytes),
});
export type CachedDatasetView = Static<typeof CachedDatasetView>;

export const EvictionTotals = Type.Object({
  trims: Type.Integer({ minimum: 0 }),
  trimmedBytes: Bytes,
  evictions: Type.Integer({ minimum: 0 }),
  evictedBytes: Bytes,
  /** Cached prefixes extended because their dataset was read often (issue 7). */
  extensions: Type.Integer({ minimum: 0 }),
  extendedBytes: Bytes,
  lastAt: Nullable(Timestamp),
});
export type EvictionTotals = Static<typeof EvictionTotals>;

/** `GET /api/v1/cache`: space, watermarks, eviction counts and every dataset's prefix. */
export const CacheStatus = Type.Object({
  capacityBytes: Bytes,
  usedBytes: Bytes,
  highWatermark: Type.Number(),
  lowWatermark: Type.Number(),
  evictions: EvictionTotals,
  datasets: Type.Array(CachedDatasetView),
});
export type CacheStatus = Static<typeof CacheStatus>;

export const PinRequest = Type.Object({ pinned: Type.Boolean() });
export type PinRequest = Static<typeof PinRequest>;

/** `PUT /api/v1/datasets/:id/cached` (admin): cut the cached part to a prefix, from the tail. */
export const CachedRequest = Type.Object({
  /** Bytes to keep cached (rounded down to whole morsels; 0 evicts the whole prefix). */
  cachedBytes: Bytes,
});
export type CachedRequest = Static<typeof CachedRequest>;

export const CacheCut = Type.Object({
  datasetId: Uuid,
  kind: Type.Union([Type.Literal('trim'), Type.Literal('evict'), Type.Literal('none')]),
  fromBytes: Bytes,
  toBytes: Bytes,
  freedBytes: Bytes,
});
export type CacheCut = Static<typeof CacheCut>;
