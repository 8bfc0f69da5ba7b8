import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  ErrorBodySchema as E,
  EvictionLogEntry,
  EvictionLogQuery,
  PrincipalView,
} from '@freeloader/protocol';
import { readableIds, rowsToScan } from '../auth/access.js';
import { requireUser } from '../auth/guards.js';
import { evictionLog } from '../repositories/evictions.js';
import { principals } from '../repositories/principals.js';

/** Log entries listed when the query names no limit. */
const EVICTIONS_DEFAULT = 100;

/**
 * A cut of the caller's dataset made for someone else's import: the owner learns why (the
 * reason, who) but not the other dataset's path or id unless they may read it, or imported it.
 *
 * @example withoutUnreadableCause({ forPath: 'x/secret.nc', forDatasetId: 'd9', … }, new Set(), me) // forPath: null
 */
function withoutUnreadableCause(
  row: EvictionLogEntry,
  readable: ReadonlySet<string>,
  userId: string,
): EvictionLogEntry {
  const mine = row.forUserId === userId;
  const visible = row.forDatasetId !== null ? readable.has(row.forDatasetId) : mine;
  return visible || mine ? row : { ...row, forDatasetId: null, forPath: null };
}

/** The eviction log (what, when, why, for which import) and display names of principals. */
const cacheLog: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/cache/evictions',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['prefix'],
        summary: 'Trims, evictions and extensions, newest first, with why and for which import',
        querystring: EvictionLogQuery,
        response: { 200: Type.Array(EvictionLogEntry), 400: E, 401: E, 500: E },
      },
    },
    async (req) => {
      const limit = req.query.limit ?? EVICTIONS_DEFAULT;
      const rows = await evictionLog(app.pg, rowsToScan(req, limit));
      const readable = await readableIds(
        req,
        rows.flatMap((r) => [r.datasetId, r.forDatasetId]),
      );
      if (readable === 'all') return rows;
      return rows
        .filter((r) => r.datasetId !== null && readable.has(r.datasetId))
        .slice(0, limit)
        .map((r) => withoutUnreadableCause(r, readable, req.user!.id));
    },
  );

  app.get(
    '/principals',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['auth'],
        summary: 'Display names of users and agents by id (for showing names, not UUIDs)',
        response: { 200: Type.Array(PrincipalView), 401: E, 500: E },
      },
    },
    async () => principals(app.pg),
  );
};
export default cacheLog;
