import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { abandonImportJobs, importsOwedBy } from '../repositories/dataset-jobs.js';
import { enqueueJob } from '../repositories/jobs.js';
import { replaceFullDonor } from './disk-full.js';
import { completeImport, failImport } from './import-outcome.js';

/**
 * A donor that dies mid-import would leave its dataset `importing` forever: when soft state
 * declares a donor dead, each import it still owes gives up that donor's jobs and moves its whole
 * share to other live donors (the disk-full path's re-placement: never onto a donor holding
 * another copy of the same morsel; the dead donor's reservation is released), so the import
 * finishes. Only when no donor can take the share does the import fail, naming the donor.
 */
export default fp(
  async (app) => {
    const off = app.donorLoss.register('dead-donor-watch', (agentId) => {
      void rescueImportsOf(app, agentId).catch((e: unknown) =>
        app.log.error({ err: e, agent: agentId }, 'moving the imports of a dead donor'),
      );
    });
    app.addHook('onClose', async () => off());
  },
  { name: 'dead-donor-watch', dependencies: ['donor-loss', 'postgres'] },
);

async function rescueImportsOf(app: FastifyInstance, agentId: string): Promise<void> {
  const died = `donor ${agentId} died during the import`;
  for (const datasetId of await importsOwedBy(app.pg, agentId)) {
    const dataset = await app.namespaceRepo.get(datasetId);
    // A prefix extension of a ready dataset is settled by its own watch (prefix plugin).
    if (dataset?.state !== 'importing') continue;
    const [job] = await abandonImportJobs(app.pg, datasetId, agentId, died);
    if (!job) continue;
    const cannot = await replaceFullDonor(app, dataset, job, job.payload, 'dead');
    if (cannot !== undefined) {
      await failImport(app, datasetId, cannot);
      continue;
    }
    // Should it come back, it drops what it stored: placement no longer names it for this.
    await enqueueJob(app.pg, { kind: 'delete', datasetId, agentId, payload: { datasetId } });
    if ((await app.jobsRepo.unfinished(datasetId, 'import')) === 0) {
      await completeImport(app, dataset);
    }
  }
}
