import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { EventBus } from '../events.js';
import type { ImportPolicyDeps } from '../placement/import-policy.js';
import type { PlaceExtentsDeps } from '../placement/place-extents.js';
import type { ProbeDeps } from '../placement/probe-source.js';
import type { NamespaceRepo } from '../repositories/namespace.js';
import type { OwnershipRepo } from '../repositories/ownership.js';
import type { ReservationsRepo } from '../repositories/reservations.js';
import type { JobsRepo } from '../repositories/jobs.js';
import type { DataKeys } from '../repositories/dataset-keys.js';

/**
 * Everything the import domain uses: repositories, soft state, keys, config, events, the log and
 * prefix caching's room-making. Routes hand the app, which satisfies it; tests may hand less.
 */
export interface ImportDeps extends PlaceExtentsDeps, ImportPolicyDeps, ProbeDeps {
  namespaceRepo: Pick<NamespaceRepo, 'createDataset' | 'get'>;
  ownershipRepo: Pick<OwnershipRepo, 'ownSharesOf' | 'chown' | 'share'>;
  reservationsRepo: Pick<
    ReservationsRepo,
    'reserve' | 'reserveMany' | 'releaseDataset' | 'commitDataset'
  >;
  jobsRepo: Pick<JobsRepo, 'unfinished'>;
  config: Pick<Config, 'replicasDefault' | 'allowFileUris'>;
  log: FastifyBaseLogger;
  events: Pick<EventBus, 'publish'>;
  dataKeys: Pick<DataKeys, 'create'>;
}
