import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  ErrorBodySchema as E,
  LeaveProgress,
  RepairCommitRequest,
  RepairCommitResponse,
  RepairQueueView,
  Uuid,
} from '@freeloader/protocol';
import { aboutReadable } from '../auth/access.js';
import { requireAgent, requireUser } from '../auth/guards.js';
import { commitRepairUnits } from './commit-repair.js';
import { leaveProgress, startLeaving } from './leave.js';
import { repairQueueView } from './queue-view.js';

/** The repair queue view, repair units' commits, and donors leaving gracefully. */
const repair: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/repairs',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['jobs'],
        summary: 'The repair queue: units waiting and running, bytes, rate and ETA',
        response: { 200: RepairQueueView, 401: E, 500: E },
      },
    },
    // The queue's totals are the cluster's; its units only those of datasets the caller may read.
    async (req) => {
      const view = await repairQueueView(app, app.repair.classes);
      return { ...view, units: await aboutReadable(req, view.units) };
    },
  );

  app.post(
    '/repairs/:jobId/commit',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['jobs'],
        summary: 'Repair units are stored and verified: move placement, ledger and fault rows',
        params: Type.Object({ jobId: Uuid }),
        body: RepairCommitRequest,
        response: { 200: RepairCommitResponse, 400: E, 401: E, 403: E, 404: E, 409: E, 500: E },
      },
    },
    async (req) => commitRepairUnits(app, req.params.jobId, req.body.unitIds, req.agent!.id),
  );

  app.post(
    '/agents/me/leave',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['agents'],
        summary: 'Leave gracefully: copies are re-created elsewhere, then the agent is released',
        response: { 200: LeaveProgress, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => {
      const progress = await startLeaving(app, req.agent!.id);
      app.repair.poke();
      return progress;
    },
  );

  app.get(
    '/agents/me/leave',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['agents'],
        summary: 'How far the calling agent’s leave has come',
        response: { 200: LeaveProgress, 401: E, 403: E, 404: E, 500: E },
      },
    },
    async (req) => leaveProgress(app, req.agent!.id),
  );
};
export default repair;
