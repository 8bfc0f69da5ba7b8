import type { PrincipalView } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';

/** Every user and agent by id with its display name (usernames, donor names). */
export async function principals(db: Queryable): Promise<PrincipalView[]> {
  const { rows } = await db.query<PrincipalView>(
    `SELECT id, username AS name, 'user' AS kind FROM users
     UNION ALL SELECT id, name, 'agent' AS kind FROM agents
     ORDER BY name, id`,
  );
  return rows;
}
