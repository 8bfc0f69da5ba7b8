import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBodySchema as E, HistoryQuery, HistoryResponse } from '@freeloader/protocol';
import { requireUser } from '../auth/guards.js';
import { readHistory } from '../repositories/history.js';

const DAY_S = 24 * 3600;

/** Sampled history (PostgreSQL): donors' used space, serving rate, uptime; import rates. */
const history: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/history',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['history'],
        summary: 'A sampled series (oldest first, per subject), surviving manager restarts',
        querystring: HistoryQuery,
        response: { 200: HistoryResponse, 400: E, 401: E, 500: E },
      },
    },
    async (req) => ({
      series: req.query.series,
      sampleIntervalS: app.history.intervalS,
      subjects: await readHistory(
        app.pg,
        req.query.series,
        req.query.subject,
        req.query.sinceS ?? DAY_S,
      ),
    }),
  );
};
export default history;
