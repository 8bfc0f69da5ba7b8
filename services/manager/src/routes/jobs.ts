import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  ErrorBodySchema as E,
  IdParams,
  JobClaimRequest,
  JobFinish,
  JobProgress,
  JobViewResponse,
  JobWaitQuery,
  JobWaitResponse,
  Ok,
  type TransferView,
} from '@freeloader/protocol';
import { requireAgent } from '../auth/guards.js';
import { onJobFinished } from '../dataset-lifecycle.js';
import { withDataKey } from '../jobs/job-keys.js';
import type { JobWaitAnswer } from '../jobs/job-waiters.js';
import { STOPPING_HEADERS, stoppingError } from '../jobs/stopping-answer.js';

/** The agent side of the job queue: wait for work, claim, report progress, finish. */
const jobs: FastifyPluginAsyncTypebox = async (app) => {
  const publish = (t: TransferView): void => {
    app.events.publish({
      type: 'transfer',
      jobId: t.jobId,
      datasetId: t.datasetId,
      agentId: t.agentId,
      state: t.state,
      doneBytes: t.doneBytes,
      totalBytes: t.totalBytes,
      rate: t.rate,
      etaSeconds: t.etaSeconds,
      error: t.error,
    });
  };

  app.get(
    '/jobs/wait',
    {
      // Every agent holds one: keep the access log for problems only.
      logLevel: 'warn',
      preHandler: requireAgent,
      schema: {
        tags: ['jobs'],
        summary: 'Job channel: held until a job is queued for the calling agent, or JOB_WAIT_MS',
        querystring: JobWaitQuery,
        response: { 200: JobWaitResponse, 400: E, 401: E, 403: E, 500: E, 503: E },
      },
    },
    async (req, reply) => {
      const agentId = req.agent!.id;
      const waiters = app.jobWaiters;
      let cursor = req.query.cursor;
      if (req.query.check || waiters.since(agentId, cursor) === 'unknown') {
        // The cursor is taken before the query: a job committed while it runs, unseen by it,
        // is announced after this point and so answers the wait below at once.
        const before = waiters.cursor;
        if (await app.jobsRepo.hasPending(agentId)) {
          return { jobsPending: true, cursor: waiters.cursor };
        }
        cursor = before;
      }
      // The agent hung up (it stopped, or its call timed out): stop holding its wait.
      const gone = new AbortController();
      const onClose = (): void => gone.abort();
      reply.raw.once('close', onClose);
      let answer: JobWaitAnswer;
      try {
        answer = await waiters.wait(agentId, cursor, app.config.jobWaitMs, gone.signal);
      } finally {
        reply.raw.off('close', onClose);
      }
      if (!waiters.closed) return answer;
      // Cut short by the manager stopping: the agent goes elsewhere (see stopping-answer.ts).
      return reply.status(503).headers(STOPPING_HEADERS).send(stoppingError().toBody());
    },
  );

  app.post(
    '/jobs/claim',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['jobs'],
        summary: 'Claim queued jobs for the calling agent (never two claimers for one job)',
        body: Type.Optional(JobClaimRequest),
        response: { 200: Type.Array(JobViewResponse), 400: E, 401: E, 403: E, 500: E },
      },
    },
    async (req) => {
      const claimed = await app.jobsRepo.claim(req.agent!.id, {
        kinds: req.body?.kinds,
        max: req.body?.max,
        resume: req.body?.resume,
      });
      for (const job of claimed) publish({ ...job, jobId: job.id, rate: 0, etaSeconds: null });
      return Promise.all(claimed.map((job) => withDataKey(app.dataKeys, job)));
    },
  );

  app.post(
    '/jobs/:id/progress',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['jobs'],
        summary: 'Report bytes done (and, for imports, morsel hashes) on a running job',
        params: IdParams,
        body: JobProgress,
        response: { 200: Ok, 400: E, 401: E, 403: E, 404: E, 409: E, 500: E },
      },
    },
    async (req) => {
      const transfer = await app.jobsRepo.progress(req.params.id, req.agent!.id, req.body);
      // Import jobs carry the hashes of the morsels stored since their last report.
      if (req.body.hashes?.length && transfer.datasetId) {
        await app.placementRepo.putMorselHashes(transfer.datasetId, req.body.hashes);
      }
      publish(transfer);
      return { ok: true as const };
    },
  );

  app.post(
    '/jobs/:id/finish',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['jobs'],
        summary: 'Finish a running job as done or failed',
        params: IdParams,
        body: JobFinish,
        response: { 200: JobViewResponse, 400: E, 401: E, 403: E, 404: E, 409: E, 500: E },
      },
    },
    async (req) => {
      const job = await app.jobsRepo.finish(req.params.id, req.agent!.id, req.body);
      publish({ ...job, jobId: job.id, rate: 0, etaSeconds: null });
      await onJobFinished(app, job, req.body.errorCode);
      return job;
    },
  );
};
export default jobs;
