import type { Queryable } from '../db/pool.js';

/** A read's weight halves every this many seconds (one day: "read often" means this week). */
export const READ_HALF_LIFE_S = 24 * 3600;

/**
 * Note one read of a dataset (a client fetched its map): the last access time eviction orders by,
 * the total read count, and the decayed read score the extension trigger uses. The score decays
 * from the previous read's time (`last_access_at` before this update) and adds one.
 * Returns the new score, or null when the dataset is gone.
 *
 * @example await recordRead(pool, id) // reads at 0 h, 12 h, 24 h → 0.5 + 0.71 + 1 = 2.21
 */
export async function recordRead(db: Queryable, datasetId: string): Promise<number | null> {
  const { rows } = await db.query<{ score: number }>(
    `UPDATE datasets SET
       read_score = read_score * power(0.5::float8, greatest(0::float8,
         extract(epoch FROM now() - coalesce(last_access_at, now()))::float8) / $2::float8) + 1,
       read_count = read_count + 1,
       last_access_at = now()
     WHERE id = $1 RETURNING read_score AS score`,
    [datasetId, READ_HALF_LIFE_S],
  );
  return rows[0]?.score ?? null;
}
