import { Type, type Static } from '@sinclair/typebox';
import { MAX_BATCH_MORSELS, MAX_MORSELS_PER_DATASET } from '../limits.js';

/**
 * The agent's morsel service (HTTP/1.1 keep-alive, debuggable with curl):
 *   GET    /v1/morsels/:dataset/:index         → 200 application/octet-stream, X-Morsel-Sha256
 *   PUT    /v1/morsels/:dataset/:index         ← body, X-Morsel-Sha256 (checked before commit)
 *   DELETE /v1/morsels/:dataset/:index         → 204
 *   DELETE /v1/morsels/:dataset                → 204 (whole dataset)
 *   GET    /v1/morsels/:dataset?from=&count=   → batch: a sequence of frames, each
 *          [u32 BE index][u32 BE length][32-byte sha256][length bytes]
 * All need `Authorization: Bearer <capability>` (or `?cap=`). Paths, headers and the frame
 * codec live in `wire/` (`@freeloader/protocol/wire`); these are the routes' schemas.
 */
export const DatasetIdParam = Type.String({
  pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
});

export const MorselParams = Type.Object({
  dataset: DatasetIdParam,
  index: Type.Integer({ minimum: 0, maximum: MAX_MORSELS_PER_DATASET - 1 }),
});
export type MorselParams = Static<typeof MorselParams>;

export const DatasetParams = Type.Object({ dataset: DatasetIdParam });

export const BatchQuery = Type.Object({
  from: Type.Integer({ minimum: 0, maximum: MAX_MORSELS_PER_DATASET - 1 }),
  count: Type.Integer({ minimum: 1, maximum: MAX_BATCH_MORSELS }),
  cap: Type.Optional(Type.String()),
});
export type BatchQuery = Static<typeof BatchQuery>;

// The wire's constants, also from the package root (for code that needs only these).
export { BATCH_FRAME_HEADER } from '../wire/batch-frame.js';
export { MORSEL_HASH_HEADER } from '../wire/headers.js';
