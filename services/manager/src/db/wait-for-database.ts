import pg from 'pg';
import { DATABASE_STARTUP_WAIT_MS } from '@freeloader/protocol';
import { restartDelayMs } from './supervise.js';
import { isDatabaseUnavailable } from './unavailable.js';

/**
 * Wait until the PostgreSQL at `url` accepts a connection, retrying with backoff while it cannot
 * be reached (down, restarting, not yet started), for up to `patienceMs`. Any other failure
 * (a wrong password, a missing database) is thrown at once: waiting would not fix it.
 * `notice` hears one line when the wait starts.
 *
 * @example await waitForDatabase(process.env.DATABASE_URL!, console.warn)
 */
export async function waitForDatabase(
  url: string,
  notice: (message: string) => void,
  patienceMs = DATABASE_STARTUP_WAIT_MS,
): Promise<void> {
  const giveUpAt = performance.now() + patienceMs;
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    // A server that drops the connection later must not crash the process.
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      if (attempt > 0) notice('the database is reachable');
      return;
    } catch (e) {
      if (!isDatabaseUnavailable(e) || performance.now() > giveUpAt) throw e;
      if (attempt === 0) {
        notice(`the database is not reachable (${(e as Error).message}); waiting for it`);
      }
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, Math.min(5_000, restartDelayMs(attempt))));
  }
}
