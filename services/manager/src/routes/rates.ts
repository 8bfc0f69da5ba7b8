import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DonorRateView, ErrorBodySchema as E, Ok, RateReport } from '@freeloader/protocol';
import { principalOf, requireUser, requireUserOrAgent } from '../auth/guards.js';
import { clientRateOf } from '../prefix/client-rates.js';

/** Clients report what donors delivered; placement and the console read the history. */
const rates: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/rates',
    {
      preHandler: requireUserOrAgent,
      schema: {
        tags: ['rates'],
        summary: 'Report observed per-donor delivery rates and failures after a read',
        body: RateReport,
        response: { 200: Ok, 400: E, 401: E, 500: E },
      },
    },
    async (req) => {
      await app.ratesRepo.record(principalOf(req), req.body);
      // R_client for the prefix model: what this client's parallel read reached.
      await app.prefixCache.clients.record(principalOf(req), clientRateOf(req.body) ?? 0);
      if (req.body.failures.length > 0) {
        req.log.warn(
          { dataset: req.body.datasetId, failures: req.body.failures },
          'client reported donor failures',
        );
      }
      return { ok: true as const };
    },
  );

  app.get(
    '/rates',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['rates'],
        summary: 'Decaying average delivery rate of each donor, as clients observed it',
        response: { 200: Type.Array(DonorRateView), 401: E, 500: E },
      },
    },
    async () => app.ratesRepo.all(),
  );
};
export default rates;
