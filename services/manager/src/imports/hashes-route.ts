import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorBodySchema as E,
  FreeLoaderError,
  IdParams,
  ImportHashesQuery,
  ImportHashesResponse,
  SHA256_BYTES,
} from '@freeloader/protocol';
import { requireAgent } from '../auth/guards.js';
import { abandonedImporters } from '../repositories/dataset-jobs.js';

/**
 * `count` hex digests out of `digests` (32 bytes each), '' for a morsel no donor reported yet
 * (beyond the buffer, or all zero).
 *
 * @example hexDigests(Buffer.alloc(32), 2) // → ['', ''] (neither morsel reported)
 */
export function hexDigests(digests: Buffer, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const d = digests.subarray(i * SHA256_BYTES, (i + 1) * SHA256_BYTES);
    out.push(d.length === SHA256_BYTES && d.some((b) => b !== 0) ? d.toString('hex') : '');
  }
  return out;
}

/**
 * `GET /jobs/:id/hashes`: an importing donor holding copy ≥ 1 of some morsels asks which of them
 * copy 0's donor has stored (its hash arrived with that donor's progress) before copying them
 * donor to donor, and verifies each copy against the hash (issue 15's fan-out).
 */
const importHashes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/jobs/:id/hashes',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['jobs'],
        summary: 'Morsel hashes the manager holds for the calling agent’s import job',
        params: IdParams,
        querystring: ImportHashesQuery,
        response: { 200: ImportHashesResponse, 400: E, 401: E, 403: E, 404: E, 409: E, 500: E },
      },
    },
    async (req) => {
      const job = await app.jobsRepo.get(req.params.id);
      if (!job || job.kind !== 'import' || job.agentId !== req.agent!.id || !job.datasetId) {
        throw new FreeLoaderError('JOB_NOT_FOUND', `no import job ${req.params.id}`);
      }
      // A job cancelled or given up on (its import failed, its donor was declared dead) learns
      // it here while it waits for copy 0, not only at its next progress report.
      if (job.state !== 'running') {
        throw new FreeLoaderError('CONFLICT', `job ${job.id} is ${job.state}, not running`);
      }
      const { first, count } = req.query;
      const digests = await app.placementRepo.getHashes(job.datasetId, first, count);
      const lost = await abandonedImporters(app.pg, job.datasetId);
      return { first, hashes: hexDigests(digests, count), ...(lost.length > 0 ? { lost } : {}) };
    },
  );
};
export default importHashes;
