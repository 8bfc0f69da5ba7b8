import type pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import type { EventBus } from '../events.js';
import type { JobsRepo } from '../repositories/jobs.js';
import type { ReservationsRepo } from '../repositories/reservations.js';

/**
 * What prefix caching's domain functions need, passed explicitly instead of the Fastify app.
 * The fields carry the names the manager app decorates itself with, so `plugin.ts` builds one
 * deps object from the app and callers elsewhere that hold the app can hand it over as is.
 */
export interface PrefixDb {
  /** Repository functions run on it; transactions start from it. */
  pg: pg.Pool;
}

/** The database plus where log lines and dataset changes go. */
export interface PrefixDeps extends PrefixDb {
  log: Pick<FastifyBaseLogger, 'debug' | 'info' | 'warn'>;
  events: Pick<EventBus, 'publish'>;
}

/** {@link PrefixDeps} plus the repositories that settle a finished extension. */
export interface ExtensionSettleDeps extends PrefixDeps {
  jobsRepo: Pick<JobsRepo, 'unfinished'>;
  reservationsRepo: Pick<ReservationsRepo, 'commitDataset'>;
}
