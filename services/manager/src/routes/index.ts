import type { FastifyPluginAsync } from 'fastify';
import agents from './agents.js';
import auth from './auth.js';
import datasets from './datasets.js';
import events from './events.js';
import health from './health.js';
import imports from './imports.js';
import jobs from './jobs.js';
import namespace from './namespace.js';
import rates from './rates.js';
import reservations from './reservations.js';
import tokens from './tokens.js';
import transfers from './transfers.js';

/** Every /api/v1 route; registered with that prefix by the app. */
const api: FastifyPluginAsync = async (app) => {
  for (const routes of [
    health,
    auth,
    tokens,
    agents,
    namespace,
    datasets,
    imports,
    rates,
    reservations,
    jobs,
    transfers,
    events,
  ]) {
    await app.register(routes);
  }
};
export default api;
