import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBodySchema as E, ImportRequest, ImportResponse } from '@freeloader/protocol';
import { principalOf, requireUser } from '../auth/guards.js';
import type { ImportDeps } from '../imports/import-deps.js';
import { startImport } from '../imports/start-import.js';
import { defaultDatasetName } from '../imports/dataset-name.js';
import { requireCreatable } from '../auth/create-access.js';

/**
 * Every error an import can answer with (bad request, auth, the source's and the cache's own):
 * shared by the import route and the retry of a failed import.
 */
export const IMPORT_ERRORS = {
  400: E,
  401: E,
  404: E,
  409: E,
  422: E,
  500: E,
  502: E,
  503: E,
  504: E,
  507: E,
} as const;

/** Import a dataset by URI (or only probe and plan it with `dryRun`). */
const imports: FastifyPluginAsyncTypebox = async (app) => {
  const deps: ImportDeps = app;
  app.post(
    '/datasets',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['datasets'],
        summary: 'Import a dataset from a URI: probe, place, reserve, and queue donor imports',
        body: ImportRequest,
        response: { 200: ImportResponse, 201: ImportResponse, ...IMPORT_ERRORS, 403: E },
      },
    },
    async (req, reply) => {
      // Before the probe: an import where the caller may not create costs no source request.
      const plan = req.body.dryRun
        ? undefined
        : await requireCreatable(req, req.body.name ?? defaultDatasetName(req.body.uri), 'dataset');
      const started = await startImport(deps, req.body, principalOf(req), plan?.newFrom);
      return reply.status(started.dataset ? 201 : 200).send(started);
    },
  );
};
export default imports;
