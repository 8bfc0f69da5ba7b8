import fp from 'fastify-plugin';
import { failImport } from './import-outcome.js';

/**
 * A donor that dies mid-import would leave its dataset `importing` forever: when soft state
 * declares a donor dead, every import it still owes fails clearly (its space is released and the
 * other donors drop their morsels). The source is still there, so re-importing is the remedy.
 */
export default fp(
  async (app) => {
    const off = app.events.subscribe((event) => {
      if (event.type !== 'agent' || event.state !== 'dead') return;
      void failImportsOf(event.agentId).catch((e: unknown) =>
        app.log.error({ err: e, agent: event.agentId }, 'failing imports of a dead donor'),
      );
    });
    app.addHook('onClose', async () => off());

    async function failImportsOf(agentId: string): Promise<void> {
      const { rows } = await app.pg.query<{ dataset_id: string }>(
        `SELECT DISTINCT dataset_id FROM jobs
         WHERE kind = 'import' AND state IN ('queued', 'running') AND agent_id = $1 AND dataset_id IS NOT NULL`,
        [agentId],
      );
      for (const { dataset_id } of rows) {
        await failImport(app, dataset_id, `donor ${agentId} died during the import`);
      }
    }
  },
  { name: 'dead-donor-watch', dependencies: ['soft-state', 'postgres'] },
);
