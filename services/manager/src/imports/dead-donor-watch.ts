import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { donorsOfMorsel, type Extent } from '@freeloader/protocol';
import { chunksOf } from '../placement/move-extents.js';
import {
  abandonImportJobs,
  abandonedImporters,
  donorsOwingImports,
  importsOwedBy,
} from '../repositories/dataset-jobs.js';
import { enqueueJob } from '../repositories/jobs.js';
import { getPlacement } from '../repositories/placement.js';
import { replaceFullDonor } from './disk-full.js';
import { completeImport, failImport } from './import-outcome.js';

/** How often the dead-donor lock holder looks for imports owed by dead donors (milliseconds). */
const DEAD_DONOR_SCAN_MS = 10_000;

/**
 * A donor that dies mid-import would leave its dataset `importing` forever: when soft state
 * declares a donor dead, each import it still owes gives up that donor's jobs and moves its whole
 * share to other live donors (the disk-full path's re-placement: never onto a donor holding
 * another copy of the same morsel; the dead donor's reservation is released), so the import
 * finishes. When no donor can take the share but every morsel of it has another copy (n ≥ 2),
 * the import finishes under-replicated and repair restores the copies later; only otherwise does
 * the import fail, naming the donor.
 * One manager of the database does it (the holder of the dead-donor lock).
 */
export default fp<{ timers?: boolean }>(
  async (app, opts) => {
    const off = app.donorLoss.register('dead-donor-watch', (agentId) => {
      void rescueImportsOf(app, agentId).catch((e: unknown) =>
        app.log.error({ err: e, agent: agentId }, 'moving the imports of a dead donor'),
      );
    });
    app.addHook('onClose', async () => off());
    // A death announced while another manager held the lock, which then died, is caught here:
    // whoever holds the lock now rescues what dead donors still owe.
    const scan = async (): Promise<void> => {
      for (const agentId of await donorsOwingImports(app.pg)) {
        if (app.softState.stateOf(agentId) === 'dead') await rescueImportsOf(app, agentId);
      }
    };
    if (opts.timers !== false) app.singletons.start('deadDonors', scan, DEAD_DONOR_SCAN_MS);
  },
  { name: 'dead-donor-watch', dependencies: ['donor-loss', 'postgres', 'singletons'] },
);

/**
 * Whether every morsel `agentId` holds in `extents` has a copy on a donor not in `lost` (the
 * donors that died during the import, `agentId` among them): then the import can finish without
 * it (under-replicated; repair re-creates its copies later).
 *
 * @example
 *   coveredElsewhere([{ copy: 0, …, donors: ['a'] }, { copy: 1, …, donors: ['b'] }], 'a', new Set(['a'])) // → true
 *   coveredElsewhere([{ copy: 0, …, donors: ['a'] }], 'a', new Set(['a'])) // → false
 */
export function coveredElsewhere(
  extents: readonly Extent[],
  agentId: string,
  lost: ReadonlySet<string>,
): boolean {
  return chunksOf(extents, agentId).every((chunk) =>
    chunk.morsels.every((m) => donorsOfMorsel(extents, m).some((d) => !lost.has(d))),
  );
}

async function rescueImportsOf(app: FastifyInstance, agentId: string): Promise<void> {
  const died = `donor ${agentId} died during the import`;
  for (const datasetId of await importsOwedBy(app.pg, agentId)) {
    const dataset = await app.namespaceRepo.get(datasetId);
    // A prefix extension of a ready dataset is settled by its own watch (prefix plugin).
    if (dataset?.state !== 'importing') continue;
    const [job] = await abandonImportJobs(app.pg, datasetId, agentId, died);
    if (!job) continue;
    const cannot = await replaceFullDonor(app, dataset, job, job.payload, 'dead').catch(
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    if (cannot === undefined) {
      // Should it come back, it drops what it stored: placement no longer names it for this.
      await enqueueJob(app.pg, { kind: 'delete', datasetId, agentId, payload: { datasetId } });
    } else if (
      job.payload.mode === 'ranged' &&
      coveredElsewhere(
        await getPlacement(app.pg, datasetId),
        agentId,
        new Set([agentId, ...(await abandonedImporters(app.pg, datasetId))]),
      )
    ) {
      // With n ≥ 2 the other copies finish the import (their donors fetch what it never
      // stored from the source); its copies count as lost until repair re-creates them.
      app.log.warn(
        { dataset: datasetId, agent: agentId, why: cannot },
        'donor died mid-import; finishing under-replicated, repair restores its copies',
      );
    } else {
      await failImport(app, datasetId, cannot);
      continue;
    }
    if ((await app.jobsRepo.unfinished(datasetId, 'import')) === 0) {
      await completeImport(app, dataset);
    }
  }
}
