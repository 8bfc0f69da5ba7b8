import fp from 'fastify-plugin';
import { donorsOwingImports, importsOwedBy } from '../repositories/dataset-jobs.js';
import { failImport } from './import-outcome.js';

/** How often the dead-donor lock holder looks for imports owed by dead donors (milliseconds). */
const DEAD_DONOR_SCAN_MS = 10_000;

/**
 * A donor that dies mid-import would leave its dataset `importing` forever: when soft state
 * declares a donor dead, every import it still owes fails clearly (its space is released and the
 * other donors drop their morsels). The source is still there, so re-importing is the remedy.
 * One manager of the database does it (the holder of the dead-donor lock).
 */
export default fp<{ timers?: boolean }>(
  async (app, opts) => {
    const off = app.donorLoss.register('dead-donor-watch', (agentId) => {
      void failImportsOf(agentId).catch((e: unknown) =>
        app.log.error({ err: e, agent: agentId }, 'failing imports of a dead donor'),
      );
    });
    app.addHook('onClose', async () => off());
    // A death announced while another manager held the lock, which then died, is caught here:
    // whoever holds the lock now fails what dead donors still owe.
    const scan = async (): Promise<void> => {
      for (const agentId of await donorsOwingImports(app.pg)) {
        if (app.softState.stateOf(agentId) === 'dead') await failImportsOf(agentId);
      }
    };
    if (opts.timers !== false) app.singletons.start('deadDonors', scan, DEAD_DONOR_SCAN_MS);

    async function failImportsOf(agentId: string): Promise<void> {
      for (const datasetId of await importsOwedBy(app.pg, agentId)) {
        await failImport(app, datasetId, `donor ${agentId} died during the import`);
      }
    }
  },
  { name: 'dead-donor-watch', dependencies: ['donor-loss', 'postgres', 'singletons'] },
);
