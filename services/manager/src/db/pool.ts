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
  const open: OpenTransaction = { pool, afterCommit: [] };
  let result: T;
  try {
    await client.query('BEGIN');
    openTransactions.set(client, open);
    result = await fn(client);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    openTransactions.delete(client);
    client.release();
  }
  // Outside the try: the work is committed whatever a hook does.
  for (const hook of open.afterCommit) hook(pool);
  return result;
}

/** A transaction {@link withTransaction} runs: its pool and what waits for its COMMIT. */
interface OpenTransaction {
  pool: pg.Pool;
  afterCommit: ((pool: Queryable) => void)[];
}
const openTransactions = new WeakMap<object, OpenTransaction>();

/**
 * Run `fn` once what was just written on `db` is visible to others: after the COMMIT of the
 * {@link withTransaction} that `db` belongs to (never, when it rolls back), or at once on the
 * pool (autocommit). Hooks must not throw: the work is committed by then. `fn` gets the pool, so it can find what is attached to it. Waking a
 * reader before COMMIT would send it looking for a row it cannot see yet.
 *
 * @example afterCommit(tx, (pool) => notifierOf(pool)?.notify(agentId))
 */
export function afterCommit(db: Queryable, fn: (pool: Queryable) => void): void {
  const open = openTransactions.get(db);
  if (open) open.afterCommit.push(fn);
  else fn(db);
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
