import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  ErrorBodySchema as E,
  FailedAttempt,
  FailedAttemptQuery,
  IdParams,
  ImportControlResult,
} from '@freeloader/protocol';
import { aboutReadable, noDataset, requireDataset, rowsToScan } from '../auth/access.js';
import { requireUser } from '../auth/guards.js';
import { cancelImport, retryImport } from '../imports/import-control.js';
import type { ImportDeps } from '../imports/import-deps.js';
import { failedAttempts } from '../repositories/failed-attempts.js';
import { IMPORT_ERRORS } from './imports.js';

/** Failed attempts listed when the query names no limit. */
const FAILURES_DEFAULT = 50;

/** Cancel and retry of imports (by those who may manage the dataset), and failed attempts. */

const importControl: FastifyPluginAsyncTypebox = async (app) => {
  const deps: ImportDeps = app;
  /** Cancel and retry are for those who may manage the dataset (permissions.ts). */
  async function mayManage(req: FastifyRequest, verb: string) {
    const { id } = req.params as { id: string };
    const dataset = await app.namespaceRepo.get(id);
    await requireDataset(req, 'manage', dataset, () => noDataset(id), verb);
  }
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
    async (req) => {
      await mayManage(req, 'cancel');
      return cancelImport(deps, req.params.id, req.user!);
    },
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
    async (req) => {
      await mayManage(req, 'retry');
      return retryImport(deps, req.params.id, req.user!);
    },
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
    // Only failures of datasets the caller may read (permissions.ts).
    async (req) => {
      const limit = req.query.limit ?? FAILURES_DEFAULT;
      const rows = await failedAttempts(app.pg, { ...req.query, limit: rowsToScan(req, limit) });
      return (await aboutReadable(req, rows)).slice(0, limit);
    },
  );
};
export default importControl;
