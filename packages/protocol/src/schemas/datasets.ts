import { Type, type Static } from '@sinclair/typebox';
import { MAX_MAP_HASH_RANGE, MAX_MORSEL_SIZE, MAX_REPLICAS, MIN_MORSEL_SIZE } from '../limits.js';
import { Bytes, NamespacePath, Timestamp, Uri, Uuid } from './common.js';
import { PlacementPolicy } from './placement-policy.js';
import { Ownership } from './sharing.js';
import { SuffixPlan } from './suffix-plan.js';
import { ThrottleReasons } from './throttle.js';

export const DatasetState = Type.Union([
  Type.Literal('importing'),
  Type.Literal('ready'),
  Type.Literal('failed'),
  Type.Literal('deleting'),
]);
export type DatasetState = Static<typeof DatasetState>;

/**
 * How well a dataset's cached morsels are replicated (issue 15): the copies wanted, the live
 * copies per morsel (a copy is live when its donor is live and no fault is recorded for it),
 * the morsels with fewer live copies than wanted and those with none (read from the source only).
 */
export const DatasetHealth = Type.Object({
  wanted: Type.Integer({ minimum: 1, maximum: MAX_REPLICAS }),
  /** Cached morsels counted (the placed prefix; the whole dataset when fully cached). */
  morsels: Type.Integer({ minimum: 0 }),
  liveMin: Type.Integer({ minimum: 0 }),
  liveAvg: Type.Number({ minimum: 0 }),
  atRisk: Type.Integer({ minimum: 0 }),
  sourceOnly: Type.Integer({ minimum: 0 }),
});
export type DatasetHealth = Static<typeof DatasetHealth>;

export const DatasetView = Type.Object({
  id: Uuid,
  path: NamespacePath,
  sourceUri: Type.Union([Uri, Type.Null()]),
  sizeBytes: Bytes,
  morselSize: Type.Integer({ minimum: MIN_MORSEL_SIZE, maximum: MAX_MORSEL_SIZE }),
  etag: Type.Union([Type.String(), Type.Null()]),
  lastModified: Type.Union([Type.String(), Type.Null()]),
  state: DatasetState,
  /** Bytes of the dataset held in the cache (a prefix when < sizeBytes). */
  cachedBytes: Bytes,
  error: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  lastAccessAt: Type.Union([Timestamp, Type.Null()]),
  /** How many distinct donors hold some of it (absent where not computed). */
  donorCount: Type.Optional(Type.Integer({ minimum: 0 })),
  /** The placement policy it was imported with (absent for datasets older than the column). */
  policy: Type.Optional(PlacementPolicy),
  /** Copies of each morsel wanted (n). */
  replicas: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REPLICAS })),
  /** The availability target n was chosen for, when the import gave one. */
  availabilityTarget: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  /** Live copies per morsel against the wanted n (absent where not computed). */
  health: Type.Optional(DatasetHealth),
  ...Ownership,
});
export type DatasetView = Static<typeof DatasetView>;

export const FolderView = Type.Object({
  id: Uuid,
  path: Type.String(),
  createdAt: Timestamp,
  ...Ownership,
});
export type FolderView = Static<typeof FolderView>;

export const ListQuery = Type.Object({
  /** Folder path to list; empty or absent for the root. */
  path: Type.Optional(Type.String({ maxLength: 4096 })),
});

export const Listing = Type.Object({
  path: Type.String(),
  folders: Type.Array(FolderView),
  datasets: Type.Array(DatasetView),
});
export type Listing = Static<typeof Listing>;

export const ExtentSchema = Type.Object({
  copy: Type.Integer({ minimum: 0 }),
  first: Type.Integer({ minimum: 0 }),
  count: Type.Integer({ minimum: 1 }),
  unit: Type.Integer({ minimum: 1 }),
  phase: Type.Integer({ minimum: 0 }),
  donors: Type.Array(Uuid, { minItems: 1 }),
});

export const DonorEndpoint = Type.Object({
  id: Uuid,
  url: Type.String(),
  state: Type.String(),
  /** Only live donors are read from; stale and dead ones are listed but not usable. */
  usable: Type.Optional(Type.Boolean()),
  /** The donor's serving governor (absent: unthrottled or unknown); readers prefer idle ones. */
  throttle: Type.Optional(Type.String()),
  /** Why it is throttled, from its last heartbeat ('cpu 0.93 > 0.75', …). */
  throttleReasons: Type.Optional(ThrottleReasons),
  /** Its serving cap in bytes/s from the last heartbeat (0 = unlimited). */
  rateCap: Type.Optional(Type.Number({ minimum: 0 })),
  /**
   * Predicted delivery rate to the reading client (bytes/s) from rates readers observed (this
   * client's, else all clients'), when known; never the join-time probe (too noisy to deal by).
   */
  rate: Type.Optional(Type.Number({ minimum: 0 })),
});

/**
 * `GET /datasets/:id/map` query: only the hashes (and tags) of morsels [first, first + count).
 * With `Accept: application/octet-stream` the answer is just those hashes, 32 bytes each (a
 * reader's next page), or with `of=tags` an encrypted dataset's AES-GCM tags, 16 bytes each; as
 * JSON it is the whole map with that range of hashes and tags (its first page).
 */
export const MapRangeQuery = Type.Object({
  first: Type.Optional(Type.Integer({ minimum: 0 })),
  count: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_MAP_HASH_RANGE })),
  of: Type.Optional(Type.Union([Type.Literal('hashes'), Type.Literal('tags')])),
});
export type MapRangeQuery = Static<typeof MapRangeQuery>;

/** What a client needs to read a dataset: extents, donor addresses, hashes and a capability. */
export const DatasetMap = Type.Object({
  dataset: DatasetView,
  extents: Type.Array(ExtentSchema),
  donors: Type.Array(DonorEndpoint),
  /**
   * SHA-256 per morsel of the bytes donors store (the ciphertext when encrypted), hex,
   * concatenated in morsel order (64 chars each): every morsel's, or with `?first=&count=` those
   * of that range, starting at morsel `hashesFirst`.
   */
  hashes: Type.String(),
  /** The morsel `hashes` starts at, when the map was asked for a range (absent: 0). */
  hashesFirst: Type.Optional(Type.Integer({ minimum: 0 })),
  /**
   * Encrypted datasets only: the AES-256 data key (base64) and the AES-GCM tag per morsel (hex,
   * 32 chars each, in morsel order): every morsel's, or in a ranged map those of the range,
   * starting at morsel `hashesFirst` like the hashes (a 1 TiB dataset's tags are 32 MiB of hex:
   * its first page must not wait for them; readers fetch the next pages with `of=tags`).
   * Readers open each morsel with them.
   */
  dataKey: Type.Optional(Type.String()),
  tags: Type.Optional(Type.String()),
  capability: Type.String(),
  capabilityExpiresAt: Timestamp,
  /**
   * How the uncached suffix is patched for this read. The map route leaves it out; the client
   * adds it from `POST /datasets/:id/patch` when the dataset is only partly cached.
   */
  suffix: Type.Optional(SuffixPlan),
  /**
   * Copies known bad (scrub, start-up check or a client's bad hash, until repaired): readers
   * never ask `donor` for `morsel`.
   */
  badCopies: Type.Optional(
    Type.Array(Type.Object({ morsel: Type.Integer({ minimum: 0 }), donor: Uuid })),
  ),
});
export type DatasetMap = Static<typeof DatasetMap>;
