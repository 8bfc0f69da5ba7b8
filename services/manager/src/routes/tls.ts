import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBodySchema as E, FreeLoaderError, ManagerCaView } from '@freeloader/protocol';

/**
 * `GET /tls/ca`: anyone. The manager's CA certificate, which an enrolling agent (or `freeloader
 * login`) fetches before it trusts the connection, and accepts only when its fingerprint is
 * the one the join token (or the user) names.
 */
const tls: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/tls/ca',
    {
      schema: {
        tags: ['tokens'],
        summary: "The manager's CA certificate and its SHA-256 fingerprint",
        response: { 200: ManagerCaView, 404: E },
      },
    },
    async () => {
      const trust = app.managerTrust;
      if (!trust) throw new FreeLoaderError('NOT_FOUND', 'this manager runs without a CA');
      return { fingerprint: trust.fingerprint, caPem: trust.caPem, https: trust.https };
    },
  );
};
export default tls;
