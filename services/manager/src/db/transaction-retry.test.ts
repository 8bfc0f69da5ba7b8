import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { createPool, isRetryableConflict, withTransaction } from './pool.js';
import type pg from 'pg';

// A real deadlock on a real PostgreSQL: two transactions lock rows 1 and 2 in opposite orders,
// each waiting at a barrier after its first lock so the cycle is certain. PostgreSQL aborts one
// (40P01); withTransaction runs it again and both commit.
let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, 4);
  await pool.query('CREATE TABLE t (id int PRIMARY KEY, n int NOT NULL)');
  await pool.query('INSERT INTO t VALUES (1, 0), (2, 0)');
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** Resolves once `n` parties have arrived. */
function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return () => {
    if (++arrived >= n) open();
    return opened;
  };
}

async function crossed(
  retryConflicts: boolean,
): Promise<{ runs: number; results: PromiseSettledResult<void>[] }> {
  let runs = 0;
  const firstRound = barrier(2);
  const bump = (a: number, b: number) =>
    withTransaction(
      pool,
      async (tx) => {
        runs++;
        await tx.query('UPDATE t SET n = n + 1 WHERE id = $1', [a]);
        // Only the first attempts meet: a retry must not wait for a partner that committed.
        if (runs <= 2) await firstRound();
        await tx.query('UPDATE t SET n = n + 1 WHERE id = $1', [b]);
      },
      { retryConflicts },
    );
  const results = await Promise.allSettled([bump(1, 2), bump(2, 1)]);
  return { runs, results };
}

describe('withTransaction on a deadlock', () => {
  it('runs the aborted transaction again: both commit, each row bumped twice', async () => {
    const { runs, results } = await crossed(true);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(runs).toBe(3);
    const { rows } = await pool.query<{ n: number }>('SELECT n FROM t ORDER BY id');
    expect(rows.map((r) => r.n)).toEqual([2, 2]);
  });

  it('reports the deadlock when the caller opted out, with nothing of the loser applied', async () => {
    await pool.query('UPDATE t SET n = 0');
    const { runs, results } = await crossed(false);
    expect(runs).toBe(2);
    const failed = results.filter((r) => r.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect(isRetryableConflict((failed[0] as PromiseRejectedResult).reason)).toBe(true);
    const { rows } = await pool.query<{ n: number }>('SELECT n FROM t ORDER BY id');
    expect(rows.map((r) => r.n)).toEqual([1, 1]);
  });
});
