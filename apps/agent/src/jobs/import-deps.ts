import type { AdmitTransfer } from '../governor/governance.js';
import type { SourcePolicy } from '@freeloader/sources';
import type { ManagerClient } from '../manager-client.js';
import type { MorselStore } from '../store/store.js';

/** Range requests in flight per importing donor: enough to hide the source's round trip. */
export const IMPORT_CONCURRENCY = 4;

/** What the import job's two ways of importing (ranged, streamed) need from the daemon. */
export interface ImportDeps {
  store: MorselStore;
  agentId: () => string;
  allowFileUris?: boolean;
  /** Which addresses the source may be fetched from (checked on every connection). */
  sourcePolicy: SourcePolicy;
  /** The governor's admission: source reads wait their turn, and wait out pauses. */
  admit?: AdmitTransfer;
  /** The manager as this agent: a fan-out import asks it which morsels copy 0 has stored. */
  manager?: Pick<ManagerClient, 'request'>;
}
