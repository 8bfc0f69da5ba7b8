import type { FastifyBaseLogger } from 'fastify';
import type pg from 'pg';
import type { Config } from '../config.js';
import type { EventBus } from '../events.js';
import type { ReservationsRepo } from '../repositories/reservations.js';
import type { SigningKeys } from '../repositories/settings.js';
import type { LivenessSync } from '../liveness-sync.js';
import type { SoftState } from '../soft-state.js';

/**
 * What repair uses: the database, soft state (who is live, for how long silent), the ledger
 * (reservations on destinations), keys to sign the jobs' read capabilities, the caps from the
 * configuration. Routes hand the app, which satisfies it.
 */
export interface RepairDeps {
  pg: pg.Pool;
  softState: Pick<SoftState, 'stateOf' | 'silentForMs' | 'heartbeatOf' | 'forget'>;
  /** Writes this manager's sightings and the outages they ended (several managers share them). */
  liveness: Pick<LivenessSync, 'flush'>;
  reservationsRepo: Pick<ReservationsRepo, 'reserve' | 'release'>;
  signingKeys: Pick<SigningKeys, 'privateKey'>;
  config: Pick<
    Config,
    'repairAfterMs' | 'repairDonorRateBps' | 'repairSourceRateBps' | 'repairTickMs'
  >;
  events: Pick<EventBus, 'publish' | 'subscribe'>;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
}
