import fp from 'fastify-plugin';
import type pg from 'pg';
import { FreeLoaderError } from '@freeloader/protocol';
import { createPool } from '../db/pool.js';

/**
 * How long a stopping manager waits for the queries still running when its pool ends (ms): a
 * heartbeat's or a claim's take milliseconds; one running longer is stuck (a database gone away)
 * and its transaction is rolled back when the connection goes.
 */
export const POOL_END_MAX_MS = 2_000;

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
      // Queries still queued for a connection are never run once the pool ends (pg-pool
      // serves no waiter after end()); it waits only for the ones running.
      const queued = pool.waitingCount;
      const running = pool.totalCount - pool.idleCount;
      const outcome = await app.closeSteps.bounded(
        `pg pool ended (${running} running, ${queued} queued)`,
        () => pool.end(),
        POOL_END_MAX_MS,
      );
      if (outcome === 'late') {
        app.log.warn(
          { running, queued },
          `pg pool not ended ${POOL_END_MAX_MS} ms into the stop: queries still running; closing anyway`,
        );
      }
    });
  },
  { name: 'postgres', dependencies: ['config', 'close-steps'] },
);
