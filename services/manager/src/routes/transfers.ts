import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ErrorBodySchema as E, TransferQuery, TransferView } from '@freeloader/protocol';
import type { FastifyRequest } from 'fastify';
import { aboutReadable, rowsToScan } from '../auth/access.js';
import { requireUser } from '../auth/guards.js';
import type { SoftState } from '../soft-state.js';
import { throttleFields } from '../throttle-view.js';

/**
 * Running jobs with their agent's serving governor: an import slowed by a busy donor says so
 * where the user waits (CLI progress line, console transfer cards).
 */
function withThrottle(rows: TransferView[], soft: SoftState): TransferView[] {
  return rows.map((t) =>
    t.state === 'running' && t.agentId
      ? { ...t, ...throttleFields(soft.heartbeatOf(t.agentId)) }
      : t,
  );
}

/** Transfers listed when the query names no limit. */
const TRANSFERS_DEFAULT = 200;

/** Transfers the caller may read, up to the asked limit however many others' are newer. */
async function readableTransfers(req: FastifyRequest, q: TransferQuery): Promise<TransferView[]> {
  const limit = q.limit ?? TRANSFERS_DEFAULT;
  const rows = await req.server.jobsRepo.transfers({ ...q, limit: rowsToScan(req, limit) });
  return (await aboutReadable(req, rows)).slice(0, limit);
}

/** Jobs as progress rows, most recently active first, of datasets the caller may read. */
const transfers: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/transfers',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['transfers'],
        summary: 'Transfers (jobs) with progress',
        querystring: TransferQuery,
        response: { 200: Type.Array(TransferView), 400: E, 401: E, 500: E },
      },
    },
    // Only transfers of datasets the caller may read (permissions.ts).
    async (req) => withThrottle(await readableTransfers(req, req.query), app.softState),
  );
};
export default transfers;
