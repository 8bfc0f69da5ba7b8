import type { FastifyPluginAsync } from 'fastify';
import agents from './agents.js';
import audit from './audit.js';
import auth from './auth.js';
import datasets from './datasets.js';
import datasetViews from './dataset-views.js';
import diagnostics from './diagnostics.js';
import events from './events.js';
import faults from './faults.js';
import groups from './groups.js';
import health from './health.js';
import history from './history.js';
import importControl from './import-control.js';
import cacheLog from './cache-log.js';
import imports from './imports.js';
import importHashes from '../imports/hashes-route.js';
import jobs from './jobs.js';
import namespace from './namespace.js';
import rates from './rates.js';
import relocation from '../relocation/routes.js';
import repair from '../repair/routes.js';
import prefixRoutes from '../prefix/routes.js';
import reservations from './reservations.js';
import settings from './settings.js';
import sharing from './sharing.js';
import tls from './tls.js';
import tokens from './tokens.js';
import transfers from './transfers.js';
import users from './users.js';

/** Every /api/v1 route; registered with that prefix by the app. */
const api: FastifyPluginAsync = async (app) => {
  for (const routes of [
    health,
    auth,
    tls,
    tokens,
    agents,
    namespace,
    datasets,
    datasetViews,
    imports,
    rates,
    faults,
    relocation,
    repair,
    diagnostics,
    prefixRoutes,
    reservations,
    jobs,
    importHashes,
    transfers,
    events,
    users,
    importControl,
    cacheLog,
    history,
    audit,
    settings,
    groups,
    sharing,
  ]) {
    await app.register(routes);
  }
};
export default api;
