import fp from 'fastify-plugin';
import type pg from 'pg';
import { FreeLoaderError } from '@freeloader/protocol';
import { createPool } from '../db/pool.js';

declare module 'fastify' {
  interface FastifyInstance {
    pg: pg.Pool;
  }
}

/**
 * One pg.Pool for the app, closed with it. An idle client's error (server restart, network
 * blip) is logged: the pool drops that client and the next query reconnects.
 */
export default fp(
  async (app) => {
    const url = app.config.databaseUrl;
    if (!url) {
      throw new FreeLoaderError(
        'UNAVAILABLE',
        'no database: set DATABASE_URL or start the manager with startManager()',
      );
    }
    const pool = createPool(url);
    // A warning, not an error: handled (the pool drops the client), and routine when the server restarts.
    pool.on('error', (err) => app.log.warn({ err }, 'idle PostgreSQL client failed'));
    app.decorate('pg', pool);
    app.addHook('onClose', async () => {
      await pool.end();
    });
  },
  { name: 'postgres', dependencies: ['config'] },
);
