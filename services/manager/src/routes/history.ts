import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorBodySchema as E,
  HistoryQuery,
  HistoryResponse,
  type HistorySeries,
} from '@freeloader/protocol';
import { readableRows } from '../auth/access.js';
import { requireUser } from '../auth/guards.js';
import { readHistory } from '../repositories/history.js';

const DAY_S = 24 * 3600;

/** Series whose subjects are datasets: each is shown only to those who may read it. */
const DATASET_SERIES: ReadonlySet<HistorySeries> = new Set(['dataset_rate']);

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
    async (req) => {
      const subjects = await readHistory(
        app.pg,
        req.query.series,
        req.query.subject,
        req.query.sinceS ?? DAY_S,
      );
      return {
        series: req.query.series,
        sampleIntervalS: app.history.intervalS,
        subjects: DATASET_SERIES.has(req.query.series)
          ? await readableRows(req, subjects, (s) => s.subject)
          : subjects,
      };
    },
  );
};
export default history;
