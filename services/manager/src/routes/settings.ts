import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBodySchema as E, SourceAllowUpdate, SourceAllowView } from '@freeloader/protocol';
import { parseAllowList } from '@freeloader/sources';
import { requireUser } from '../auth/guards.js';
import { getSourceAllow, putSourceAllow } from '../repositories/settings.js';

/**
 * The admin's source allow list: hosts and CIDRs that imports, probes and patching may reach
 * although they are loopback, private, link-local … Agents receive it with their heartbeats.
 */
const settings: FastifyPluginAsyncTypebox = async (app) => {
  const admin = requireUser('admin');
  const view = async () => ({
    allow: await getSourceAllow(app.pg),
    fromEnvironment: app.config.sourceAllow,
  });

  app.get(
    '/settings/sources',
    {
      preHandler: admin,
      schema: {
        tags: ['settings'],
        summary: 'The source allow list (admin setting plus FREELOADER_SOURCE_ALLOW)',
        response: { 200: SourceAllowView, 401: E, 403: E, 500: E },
      },
    },
    view,
  );

  app.put(
    '/settings/sources',
    {
      preHandler: admin,
      schema: {
        tags: ['settings'],
        summary: 'Replace the admin source allow list (hostnames, IP addresses, CIDRs)',
        body: SourceAllowUpdate,
        response: { 200: SourceAllowView, 400: E, 401: E, 403: E, 500: E },
      },
    },
    async (req) => {
      const allow = parseAllowList(req.body.allow);
      await putSourceAllow(app.pg, allow);
      app.sourcePolicy.adopt(allow);
      return view();
    },
  );
};
export default settings;
