import type { Queryable } from '../db/pool.js';

/** Every agent not revoked, with its enrolled URL and whether it gives bandwidth only. */
export async function patchNodeAgents(
  db: Queryable,
): Promise<{ id: string; url: string; bandwidth_only: boolean }[]> {
  const { rows } = await db.query<{ id: string; url: string; bandwidth_only: boolean }>(
    'SELECT id, url, bandwidth_only FROM agents WHERE revoked_at IS NULL',
  );
  return rows;
}
