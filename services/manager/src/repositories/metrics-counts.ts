import type { Queryable } from '../db/pool.js';

/** Jobs per kind and state, for `/metrics`. */
export async function countJobsByKindAndState(
  db: Queryable,
): Promise<Array<{ kind: string; state: string; n: number }>> {
  const { rows } = await db.query<{ kind: string; state: string; n: number }>(
    'SELECT kind, state, count(*)::int AS n FROM jobs GROUP BY kind, state',
  );
  return rows;
}

/** Datasets per state, for `/metrics`. */
export async function countDatasetsByState(
  db: Queryable,
): Promise<Array<{ state: string; n: number }>> {
  const { rows } = await db.query<{ state: string; n: number }>(
    'SELECT state, count(*)::int AS n FROM datasets GROUP BY state',
  );
  return rows;
}
