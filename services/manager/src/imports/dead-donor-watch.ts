import fp from 'fastify-plugin';
import { importsOwedBy } from '../repositories/dataset-jobs.js';
import { failImport } from './import-outcome.js';

/**
 * A donor that dies mid-import would leave its dataset `importing` forever: when soft state
 * declares a donor dead, every import it still owes fails clearly (its space is released and the
 * other donors drop their morsels). The source is still there, so re-importing is the remedy.
 */
export default fp(
  async (app) => {
    const off = app.donorLoss.register('dead-donor-watch', (agentId) => {
      void failImportsOf(agentId).catch((e: unknown) =>
        app.log.error({ err: e, agent: agentId }, 'failing imports of a dead donor'),
      );
    });
    app.addHook('onClose', async () => off());

    async function failImportsOf(agentId: string): Promise<void> {
      for (const datasetId of await importsOwedBy(app.pg, agentId)) {
        await failImport(app, datasetId, `donor ${agentId} died during the import`);
      }
    }
  },
  { name: 'dead-donor-watch', dependencies: ['donor-loss', 'postgres'] },
);
