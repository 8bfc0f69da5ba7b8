import { MAX_MORSELS_PER_DATASET } from '../limits.js';

/**
 * The paths of the morsel wire, built and parsed in one place: the donor's routes, the lean
 * path's parser and the clients all use these, so a route and its callers cannot disagree.
 *
 *   /v1/morsels/:dataset/:index            one morsel (GET, HEAD, PUT, DELETE)
 *   /v1/morsels/:dataset                   the whole dataset (DELETE)
 *   /v1/morsels/:dataset?from=&count=      a batch of frames (GET; see batch-frame.ts)
 *   /v1/patch/:dataset/:session            a patching session (POST join, DELETE leave)
 *   /v1/patch/:dataset/:session/:index     a patched morsel (GET, PUT)
 */

/** Route templates as the donor registers them (Fastify syntax). */
export const MORSEL_ROUTE = '/v1/morsels/:dataset/:index';
export const DATASET_MORSELS_ROUTE = '/v1/morsels/:dataset';
export const PATCH_SESSION_ROUTE = '/v1/patch/:dataset/:session';
export const PATCH_MORSEL_ROUTE = '/v1/patch/:dataset/:session/:index';
export const PATCH_FAIL_ROUTE = '/v1/patch/:dataset/:session/fail';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** A canonical index: no sign, no leading zero, at most ten digits. */
const INDEX = '0|[1-9]\\d{0,9}';
const MORSEL_PATH = new RegExp(`^/v1/morsels/(${UUID})/(${INDEX})$`);
const BATCH_PATH = new RegExp(`^/v1/morsels/(${UUID})\\?from=(${INDEX})&count=(${INDEX})$`);

/** One morsel's path. @example morselPath(id, 7) === `/v1/morsels/${id}/7` */
export function morselPath(datasetId: string, index: number): string {
  return `/v1/morsels/${datasetId}/${index}`;
}

/** A whole dataset's path (DELETE frees every morsel this donor holds of it). */
export function datasetMorselsPath(datasetId: string): string {
  return `/v1/morsels/${datasetId}`;
}

/** A batch read's path. @example batchPath(id, 0, 8) === `/v1/morsels/${id}?from=0&count=8` */
export function batchPath(datasetId: string, from: number, count: number): string {
  return `/v1/morsels/${datasetId}?from=${from}&count=${count}`;
}

/**
 * The dataset and index of a canonical morsel path (lower-case id, index without leading zeros,
 * below MAX_MORSELS_PER_DATASET), else undefined. The lean path serves only these; anything
 * else goes to the full service, which answers it (or refuses it) as its schema says.
 */
export function parseMorselPath(path: string): { datasetId: string; index: number } | undefined {
  const m = MORSEL_PATH.exec(path);
  if (!m) return undefined;
  const index = Number(m[2]);
  return index < MAX_MORSELS_PER_DATASET ? { datasetId: m[1]!, index } : undefined;
}

/** The dataset, `from` and `count` of a canonical batch path (as {@link batchPath} writes it). */
export function parseBatchPath(
  path: string,
): { datasetId: string; from: number; count: number } | undefined {
  const m = BATCH_PATH.exec(path);
  return m ? { datasetId: m[1]!, from: Number(m[2]), count: Number(m[3]) } : undefined;
}

/** A patching session's path on its node (join, keep-alive, leave). */
export function patchSessionPath(datasetId: string, sessionId: string): string {
  return `/v1/patch/${datasetId}/${sessionId}`;
}

/** A patched morsel's path on the node that serves it. */
export function patchMorselPath(datasetId: string, sessionId: string, index: number): string {
  return `${patchSessionPath(datasetId, sessionId)}/${index}`;
}
