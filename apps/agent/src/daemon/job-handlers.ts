import type { JobKind } from '@freeloader/protocol';
import type { SourcePolicy } from '@freeloader/sources';
import type { AdmitTransfer } from '../governor/governance.js';
import type { ForegroundYield } from '../governor/foreground-yield.js';
import { deleteJobHandler } from '../jobs/delete-job.js';
import { importJobHandler } from '../jobs/import-job.js';
import type { JobHandler } from '../jobs/job-runner.js';
import { relocateJobHandler } from '../jobs/relocate-job.js';
import { repairJobHandler } from '../jobs/repair-job.js';
import type { ManagerClient } from '../manager-client.js';
import type { RelocationTracker } from '../relocation/relocation-tracker.js';
import type { RetiringStore } from '../store/retiring-store.js';

/** What a donor's job handlers share: its store, its manager and its governor's admission. */
export interface DonorJobDeps {
  store: RetiringStore;
  manager: ManagerClient;
  /** The enrolled agent's id (jobs run only after enrollment). */
  agentId: () => string;
  allowFileUris: boolean;
  sourcePolicy: SourcePolicy;
  /** Imports, relocation pushes and repairs move bytes through the serving governor too. */
  admit: AdmitTransfer;
  /** Client reads served here hold repair traffic back. */
  foreground: ForegroundYield;
  relocation: RelocationTracker;
}

/**
 * The job kinds a donor runs, each wired to what it needs and nothing more.
 *
 * @example
 *   new JobRunner(manager, donorJobHandlers({ store, manager, agentId, … }), log, reports)
 *   // claims import, delete, relocate and repair jobs
 */
export function donorJobHandlers(deps: DonorJobDeps): Partial<Record<JobKind, JobHandler>> {
  const { store, manager, allowFileUris, sourcePolicy, admit } = deps;
  return {
    import: importJobHandler({
      store,
      agentId: deps.agentId,
      allowFileUris,
      sourcePolicy,
      admit,
      manager,
    }),
    delete: deleteJobHandler(store),
    relocate: relocateJobHandler({
      store,
      manager,
      tracker: deps.relocation,
      retire: (datasetId, morsels, keepMs) => store.retire(datasetId, morsels, keepMs),
      admit,
    }),
    repair: repairJobHandler({
      store,
      manager,
      allowFileUris,
      sourcePolicy,
      admit,
      foreground: deps.foreground,
    }),
  };
}
