import type { FastifyBaseLogger } from 'fastify';
import type { DatasetLifecycleDeps } from '../dataset-lifecycle.js';
import type { PlacementDeps } from '../placement/placement-deps.js';
import type { ProbeDeps } from '../placement/probe-source.js';
import type { ReservationsRepo } from '../repositories/reservations.js';
import type { SigningKeys } from '../repositories/settings.js';
import type { SoftState } from '../soft-state.js';

/**
 * Everything relocation uses: the ledger, soft state (it records the new quota), keys to sign
 * the targets' write capability, source probes and dataset deletion for eviction. Routes hand
 * the app, which satisfies it.
 */
export interface RelocationDeps extends PlacementDeps, ProbeDeps, DatasetLifecycleDeps {
  softState: Pick<SoftState, 'stateOf' | 'heartbeatOf' | 'record'>;
  reservationsRepo: Pick<ReservationsRepo, 'reserve' | 'release' | 'releaseDataset'>;
  signingKeys: Pick<SigningKeys, 'privateKey'>;
  log: Pick<FastifyBaseLogger, 'info'>;
}
