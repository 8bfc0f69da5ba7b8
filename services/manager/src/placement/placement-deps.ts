import type pg from 'pg';
import type { SoftState } from '../soft-state.js';

/**
 * What placement reads: the ledger (through repositories, on this pool) and soft state
 * (liveness, fresh heartbeats). Explicit so imports, prefix caching and relocation hand it what
 * it needs rather than the whole app; the Fastify app satisfies it as it is.
 */
export interface PlacementDeps {
  pg: pg.Pool;
  softState: Pick<SoftState, 'stateOf' | 'heartbeatOf'>;
}
