import type { Queryable } from '../db/pool.js';

/** Those of `ids` that are enrolled and not revoked, by id (who still gets delete jobs). */
export async function unrevokedAgents(db: Queryable, ids: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM agents WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL ORDER BY id',
    [ids],
  );
  return rows.map((r) => r.id);
}
