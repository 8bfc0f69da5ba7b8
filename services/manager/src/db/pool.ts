import pg from 'pg';

/** Anything that runs a query: the pool, or one client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

// bigint (int8) columns and count(*) are byte counts and row counts, exact as JS numbers up to
// 2^53; parsing them on this pool only keeps pg's process-wide defaults untouched for others.
const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (value: string) => Number(value)
      : (pg.types.getTypeParser(oid, format) as (
          value: string,
        ) => unknown)) as typeof pg.types.getTypeParser,
};

/** A pool for `connectionString` whose int8 values come back as numbers. */
export function createPool(connectionString: string, max = 10): pg.Pool {
  return new pg.Pool({ connectionString, max, types, idleTimeoutMillis: 30_000 });
}

/**
 * Run `fn` in a transaction on one pooled client: COMMIT when it resolves, ROLLBACK when it throws.
 *
 * @example await withTransaction(pool, async (tx) => { await tx.query('...'); })
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (tx: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/**
 * Run `fn` atomically: in a new transaction when given the pool, or on the caller's client
 * (whose transaction, if any, the caller owns).
 */
export async function inTransaction<T>(
  db: pg.Pool | pg.PoolClient,
  fn: (tx: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return db instanceof pg.Pool ? withTransaction(db, fn) : fn(db);
}

/** Round-trip the database once (health checks): throws when it cannot be reached. */
export async function pingDatabase(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}
