import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A throwaway database on a PostgreSQL server, with a query helper and a forced drop. */
export interface ScratchDatabase {
  url: string;
  name: string;
  /** One query on the database (a short-lived connection: tests arrange and check rows). */
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

/**
 * A fresh, empty database on the server at `adminUrl`, so tests never see each other's rows (and
 * a manager process started on it can be killed and started again on the same data). Dropped
 * with FORCE, which ends stray connections.
 *
 * @example const db = await createScratchDatabase('postgres://postgres@127.0.0.1:5432/test');
 */
export async function createScratchDatabase(adminUrl: string): Promise<ScratchDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const withClient = async <T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    query: <R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) =>
      withClient(url.toString(), async (c) => (await c.query<R>(sql, params)).rows),
    drop: async () => {
      await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
