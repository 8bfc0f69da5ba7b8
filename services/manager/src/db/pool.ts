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
 * SQLSTATEs of a transaction PostgreSQL rolled back to break a deadlock (40P01) or a
 * serialization conflict (40001): nothing of it was applied, and running it again is the
 * documented remedy.
 */
const RETRYABLE_STATES = new Set(['40P01', '40001']);

/** Attempts of a transaction that keeps losing deadlocks before its error reaches the caller. */
export const TRANSACTION_ATTEMPTS = 4;

/** Whether `err` is PostgreSQL rolling a transaction back to break a deadlock or conflict. */
export function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && RETRYABLE_STATES.has(code);
}

export interface TransactionOptions {
  /**
   * Run `fn` again (up to {@link TRANSACTION_ATTEMPTS} times) when PostgreSQL aborts it to
   * break a deadlock. Default true; a caller whose `fn` has effects outside this transaction
   * (its own transactions, in-memory state) passes false.
   */
  retryConflicts?: boolean;
}

/**
 * Run `fn` in a transaction on one pooled client: COMMIT when it resolves, ROLLBACK when it
 * throws. A transaction PostgreSQL aborted to break a deadlock is run again from the start
 * (short random pause first), so the caller sees a deadlock only after repeated losses.
 *
 * @example await withTransaction(pool, async (tx) => { await tx.query('...'); })
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (tx: pg.PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const attempts = options.retryConflicts === false ? 1 : TRANSACTION_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactionOnce(pool, fn);
    } catch (e) {
      if (attempt >= attempts || !isRetryableConflict(e)) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}

async function transactionOnce<T>(
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
 * The pool `db` came from when it is a {@link withTransaction} client, else `db` itself: what a
 * per-pool registry (say, the job notifier) is keyed by.
 *
 * @example poolOf(tx) === pool // inside withTransaction(pool, async (tx) => …)
 */
export function poolOf(db: Queryable): Queryable {
  return openTransactions.get(db)?.pool ?? db;
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
