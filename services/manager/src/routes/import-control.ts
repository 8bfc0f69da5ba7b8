import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  ErrorBodySchema as E,
  FailedAttempt,
  FailedAttemptQuery,
  IdParams,
  ImportControlResult,
} from '@freeloader/protocol';
import { requireUser } from '../auth/guards.js';
import { cancelImport, retryImport } from '../imports/import-control.js';
import type { ImportDeps } from '../imports/import-deps.js';
import { failedAttempts } from '../repositories/failed-attempts.js';
import { IMPORT_ERRORS } from './imports.js';

/** Cancel and retry of imports (admins, or the user who started one), and failed attempts. */

const importControl: FastifyPluginAsyncTypebox = async (app) => {
  const deps: ImportDeps = app;
  app.post(
    '/datasets/:id/cancel',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['transfers'],
        summary: 'Cancel an import in flight: jobs cancelled, space released, dataset failed',
        params: IdParams,
        response: { 200: ImportControlResult, 400: E, 401: E, 403: E, 404: E, 409: E, 500: E },
      },
    },
    async (req) => cancelImport(deps, req.params.id, req.user!),
  );

  app.post(
    '/datasets/:id/retry',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['transfers'],
        summary: 'Import a failed dataset again from its source, under the same path',
        params: IdParams,
        response: { 200: ImportControlResult, 403: E, ...IMPORT_ERRORS },
      },
    },
    async (req) => retryImport(deps, req.params.id, req.user!),
  );

  app.get(
    '/transfers/failures',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['transfers'],
        summary: 'Failed jobs, newest first: time, donor, dataset and error',
        querystring: FailedAttemptQuery,
        response: { 200: Type.Array(FailedAttempt), 400: E, 401: E, 500: E },
      },
    },
    async (req) => failedAttempts(app.pg, req.query),
  );
};
export default importControl;
