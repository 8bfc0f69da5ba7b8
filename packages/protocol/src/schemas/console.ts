import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, Uuid } from './common.js';
import { AgentState } from './agents.js';
import { ExtentSchema } from './datasets.js';

/**
 * Header a browser must send on every cookie-authenticated unsafe request (POST, PUT, PATCH,
 * DELETE). A cross-site form or image cannot set custom headers, and a cross-site `fetch` that
 * does needs a CORS preflight the manager never grants, so its presence proves same origin.
 * Bearer-token callers (CLI, agents) are not CSRF-prone and need not send it.
 */
export const CSRF_HEADER = 'x-freeloader-csrf';

/** `GET /api/v1/datasets?query=&limit=`: datasets whose path contains `query` (case-insensitive). */
export const DatasetSearchQuery = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 256 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
});
export type DatasetSearchQuery = Static<typeof DatasetSearchQuery>;

/**
 * `GET /api/v1/datasets/:id/placement`: where the stripes live, for display. Unlike the read
 * map it signs no capability, carries no hashes and does not count as an access.
 */
export const DatasetPlacement = Type.Object({
  datasetId: Uuid,
  morselSize: Type.Integer(),
  morsels: Type.Integer(),
  extents: Type.Array(ExtentSchema),
  donors: Type.Array(Type.Object({ id: Uuid, name: Type.String(), state: AgentState })),
});
export type DatasetPlacement = Static<typeof DatasetPlacement>;

/** One point of a dataset's import throughput: summed rate of its jobs at `at`. */
export const ThroughputSample = Type.Object({
  at: Timestamp,
  /** Bytes/s over all of the dataset's running transfers. */
  rate: Type.Number({ minimum: 0 }),
  /** Bytes done over all of its transfers. */
  doneBytes: Type.Integer({ minimum: 0 }),
});
export type ThroughputSample = Static<typeof ThroughputSample>;

/**
 * `GET /api/v1/datasets/:id/throughput`: recent samples, oldest first. Kept in the manager's
 * memory only (a restart forgets them), a bounded ring per dataset.
 */
export const ThroughputHistory = Type.Object({
  datasetId: Uuid,
  samples: Type.Array(ThroughputSample),
});
export type ThroughputHistory = Static<typeof ThroughputHistory>;
