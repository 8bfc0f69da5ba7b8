import fp from 'fastify-plugin';
import { migrate } from '../db/migrate.js';

/** Bring the schema up to date before any route can run a query. */
export default fp(
  async (app) => {
    const applied = await migrate(app.pg);
    if (applied.length > 0) app.log.info({ applied }, 'applied database migrations');
  },
  { name: 'migrations', dependencies: ['postgres'] },
);
