import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuditPage, AuditQuery, ErrorBodySchema as E } from '@freeloader/protocol';
import { requireUser } from '../auth/guards.js';

/** `GET /audit` (admin): the audit log, newest first, a page at a time. */
const audit: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/audit',
    {
      preHandler: requireUser('admin'),
      schema: {
        tags: ['audit'],
        summary:
          'Who imported, deleted, revoked, created tokens and users, changed settings, logged in',
        querystring: AuditQuery,
        response: { 200: AuditPage, 400: E, 401: E, 403: E, 500: E },
      },
    },
    async (req) => {
      const limit = req.query.limit ?? 50;
      // One more than asked tells whether an older page exists.
      const rows = await app.auditRepo.page(limit + 1, req.query.before);
      const entries = rows.slice(0, limit);
      return { entries, next: rows.length > limit ? entries[entries.length - 1]!.id : null };
    },
  );
};
export default audit;
