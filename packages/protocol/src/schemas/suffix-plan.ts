import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';

/** A patching node as a client (or a peer) reaches it. */
export const PatchNode = Type.Object({ id: Uuid, url: Type.String() });
export type PatchNode = Static<typeof PatchNode>;

/**
 * How the uncached suffix of a dataset is patched for one read (seed 002 §4.1): morsels
 * [firstMorsel, endMorsel) are downloaded from the source by the patching nodes in contiguous
 * requests of `requestSize` bytes (request r of the suffix goes to nodes[r mod p]), shuffled
 * among them, and served striped in morsels: morsel m is served by nodes[(m − firstMorsel) mod p].
 * The client reads them from `GET {node}/v1/patch/{datasetId}/{sessionId}/{m}` with its read
 * capability, concurrently with the cached prefix from the storage donors.
 */
export const SuffixPlan = Type.Object({
  sessionId: Uuid,
  datasetId: Uuid,
  firstMorsel: Type.Integer({ minimum: 0 }),
  endMorsel: Type.Integer({ minimum: 0 }),
  /** Bytes per source request (whole morsels): large, to amortise the source's per-request cost. */
  requestSize: Type.Integer({ minimum: 1 }),
  /** The patching nodes in stripe order; empty when none is available (read from the source). */
  nodes: Type.Array(PatchNode),
  /** The version being patched: every source read is pinned to it (If-Match / If-Range). */
  etag: Type.Union([Type.String(), Type.Null()]),
});
export type SuffixPlan = Static<typeof SuffixPlan>;
