import type { Queryable } from '../db/pool.js';

/** A key's live window: failures counted in it and milliseconds until it ends. */
export interface LoginFailureWindow {
  failures: number;
  leftMs: number;
}

/**
 * Failed-login windows in `login_failures`, shared by every manager of the database, timed by
 * the database's clock (managers' clocks may disagree).
 */
export function createLoginFailuresRepo(db: Queryable) {
  return {
    /** The live windows among `keys`. */
    async live(keys: readonly string[]): Promise<Map<string, LoginFailureWindow>> {
      const { rows } = await db.query<{ key: string; failures: number; left_ms: number }>(
        `SELECT key, failures,
                (extract(epoch FROM window_ends_at - now()) * 1000)::float8 AS left_ms
         FROM login_failures WHERE key = ANY($1::text[]) AND window_ends_at > now()`,
        [keys],
      );
      return new Map(rows.map((r) => [r.key, { failures: r.failures, leftMs: r.left_ms }]));
    },

    /**
     * Count one failure against each of `keys` in one statement: in its live window, or in a
     * new one of `windowMs` when it has none (or it ended). Atomic per row, so two managers
     * counting at once both count.
     */
    async count(keys: readonly string[], windowMs: number): Promise<void> {
      await db.query(
        `INSERT INTO login_failures AS f (key, failures, window_ends_at)
         SELECT k, 1, now() + $2 * interval '1 millisecond' FROM unnest($1::text[]) AS k
         ON CONFLICT (key) DO UPDATE SET
           failures = CASE WHEN f.window_ends_at > now() THEN f.failures + 1 ELSE 1 END,
           window_ends_at = CASE WHEN f.window_ends_at > now() THEN f.window_ends_at
                                 ELSE excluded.window_ends_at END`,
        [keys, windowMs],
      );
    },

    /** Delete up to `batch` ended windows; returns how many. */
    async pruneEnded(batch = 1_000): Promise<number> {
      const { rowCount } = await db.query(
        `DELETE FROM login_failures WHERE key IN (
           SELECT key FROM login_failures WHERE window_ends_at <= now() LIMIT $1)`,
        [batch],
      );
      return rowCount ?? 0;
    },
  };
}

export type LoginFailuresRepo = ReturnType<typeof createLoginFailuresRepo>;
