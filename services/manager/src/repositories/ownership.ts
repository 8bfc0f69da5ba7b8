import fp from 'fastify-plugin';
import type pg from 'pg';
import { FreeLoaderError, type GroupView, type ShareView } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import { isPgError, UNIQUE_VIOLATION } from './rows.js';

/** JSON shares of the rows `s` (joined to groups `g`), `from` given as an SQL expression. */
const shareJson = (from: string) =>
  `coalesce(json_agg(json_build_object('groupId', s.group_id, 'group', g.name,
     'manage', s.manage, 'from', ${from}) ORDER BY g.name NULLS FIRST), '[]'::json)`;

/**
 * Owner and sharing columns of a dataset row `d` whose path is the SQL expression `path` and
 * whose folder path is `f.path`: its own shares and those of every folder above it.
 */
export const datasetAccessColumns = (path: string) => `
  d.owner_id, (SELECT username FROM users WHERE id = d.owner_id) AS owner,
  (SELECT ${shareJson(`CASE WHEN s.dataset_id IS NULL THEN folder_path(s.folder_id) ELSE ${path} END`)}
   FROM shares s LEFT JOIN groups g ON g.id = s.group_id
   WHERE s.dataset_id = d.id OR s.folder_id IN (SELECT folder_ancestors(d.folder_id))) AS sharing`;

/** Owner and sharing columns of a folder row `fo`: its shares and its ancestors'. */
export const FOLDER_ACCESS_COLUMNS = `
  fo.owner_id, (SELECT username FROM users WHERE id = fo.owner_id) AS owner,
  (SELECT ${shareJson('folder_path(s.folder_id)')}
   FROM shares s LEFT JOIN groups g ON g.id = s.group_id
   WHERE s.folder_id IN (SELECT folder_ancestors(fo.id))) AS sharing`;

/**
 * What seeing folder `fo` depends on (see canSee): owners of everything in its subtree, and
 * every share on, below or above it.
 */
export const FOLDER_SUBTREE_COLUMNS = `
  (SELECT array_agg(o) FROM (
     SELECT owner_id AS o FROM folders WHERE id IN (SELECT folder_subtree(fo.id))
     UNION ALL
     SELECT owner_id FROM datasets WHERE folder_id IN (SELECT folder_subtree(fo.id))) x
  ) AS subtree_owners,
  (SELECT coalesce(json_agg(json_build_object('groupId', s.group_id, 'manage', s.manage)),
                   '[]'::json)
   FROM shares s
   WHERE s.folder_id IN (SELECT folder_subtree(fo.id))
      OR s.folder_id IN (SELECT folder_ancestors(fo.id))
      OR s.dataset_id IN (SELECT id FROM datasets WHERE folder_id IN (SELECT folder_subtree(fo.id)))
  ) AS subtree_shares`;

/** Owner and sharing fields as the views carry them. */
export interface AccessRow {
  owner_id: string | null;
  owner: string | null;
  sharing: ShareView[];
}
export const accessFields = (r: AccessRow) => ({
  owner: r.owner,
  ownerId: r.owner_id,
  sharing: r.sharing,
});

/** A group a user is in, and whether as one of its managers (permissions.ts's Membership). */
export interface MembershipRow {
  groupId: string;
  manager: boolean;
}

/** An audience a folder or dataset is shared with (permissions.ts's Share). */
export interface ShareRow {
  groupId: string | null;
  manage: boolean;
}

/** A folder or dataset addressed by id. */
export interface ItemRef {
  kind: 'dataset' | 'folder';
  id: string;
}
const column = (item: ItemRef) => (item.kind === 'dataset' ? 'dataset_id' : 'folder_id');

/** Groups, memberships, shares and owners: the SQL behind permissions.ts. */
export function createOwnershipRepo(pool: pg.Pool) {
  return {
    async membershipsOf(userId: string): Promise<MembershipRow[]> {
      const { rows } = await pool.query<{ group_id: string; manager: boolean }>(
        'SELECT group_id, manager FROM group_members WHERE user_id = $1',
        [userId],
      );
      return rows.map((r) => ({ groupId: r.group_id, manager: r.manager }));
    },

    /**
     * Does agent `agentId` hold, import, relocate, patch or repair dataset `datasetId`? Only
     * then may it read the dataset and its map.
     */
    async agentTouches(datasetId: string, agentId: string): Promise<boolean> {
      const { rows } = await pool.query<{ yes: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM placement_extents
                        WHERE dataset_id = $1 AND $2::uuid = ANY (donors))
             OR EXISTS (SELECT 1 FROM jobs WHERE dataset_id = $1 AND agent_id = $2
                        AND state IN ('queued', 'running'))
             OR EXISTS (SELECT 1 FROM repair_units WHERE dataset_id = $1 AND to_agent = $2)
             OR EXISTS (SELECT 1 FROM patch_sessions WHERE dataset_id = $1 AND state = 'active'
                        AND nodes @> jsonb_build_array(jsonb_build_object('id', $2::text)))
           AS yes`,
        [datasetId, agentId],
      );
      return rows[0]!.yes;
    },

    /** Share `item` with a group (or the site: null); a second share changes `manage`. */
    async share(item: ItemRef, groupId: string | null, manage: boolean): Promise<void> {
      await pool.query(
        `INSERT INTO shares (${column(item)}, group_id, manage) VALUES ($1, $2, $3)
         ON CONFLICT (coalesce(folder_id, dataset_id),
                      coalesce(group_id, '00000000-0000-0000-0000-000000000000'))
         DO UPDATE SET manage = EXCLUDED.manage`,
        [item.id, groupId, manage],
      );
    },

    /** Stop sharing `item` itself with a group (or the site); false when it was not. */
    async unshare(item: ItemRef, groupId: string | null): Promise<boolean> {
      const { rowCount } = await pool.query(
        `DELETE FROM shares WHERE ${column(item)} = $1 AND group_id IS NOT DISTINCT FROM $2`,
        [item.id, groupId],
      );
      return (rowCount ?? 0) > 0;
    },

    /** The shares set on a dataset itself (a retried import carries them over). */
    async ownSharesOf(db: Queryable, datasetId: string): Promise<ShareRow[]> {
      const { rows } = await db.query<{ group_id: string | null; manage: boolean }>(
        'SELECT group_id, manage FROM shares WHERE dataset_id = $1',
        [datasetId],
      );
      return rows.map((r) => ({ groupId: r.group_id, manage: r.manage }));
    },

    async chown(item: ItemRef, userId: string): Promise<void> {
      const table = item.kind === 'dataset' ? 'datasets' : 'folders';
      await pool.query(`UPDATE ${table} SET owner_id = $2 WHERE id = $1`, [item.id, userId]);
    },

    async groupByName(name: string): Promise<{ id: string; name: string } | null> {
      const { rows } = await pool.query<{ id: string; name: string }>(
        'SELECT id, name FROM groups WHERE name = $1',
        [name],
      );
      return rows[0] ?? null;
    },

    /** Every group with its members, by name. */
    async groups(): Promise<GroupView[]> {
      const { rows } = await pool.query<GroupView>(
        `SELECT g.id, g.name,
           coalesce(json_agg(json_build_object('username', u.username, 'manager', m.manager)
                             ORDER BY u.username) FILTER (WHERE u.id IS NOT NULL), '[]'::json)
             AS members
         FROM groups g LEFT JOIN group_members m ON m.group_id = g.id
         LEFT JOIN users u ON u.id = m.user_id
         GROUP BY g.id ORDER BY g.name`,
      );
      return rows;
    },

    /** A new group with its creator as its first manager; ALREADY_EXISTS when taken. */
    async createGroup(name: string, creatorId: string): Promise<string> {
      try {
        const { rows } = await pool.query<{ id: string }>(
          `WITH g AS (INSERT INTO groups (name) VALUES ($1) RETURNING id)
           INSERT INTO group_members (group_id, user_id, manager)
           SELECT g.id, $2, true FROM g RETURNING group_id AS id`,
          [name, creatorId],
        );
        return rows[0]!.id;
      } catch (e) {
        if (isPgError(e, UNIQUE_VIOLATION)) {
          throw new FreeLoaderError('ALREADY_EXISTS', `group "${name}" already exists`);
        }
        throw e;
      }
    },

    async deleteGroup(groupId: string): Promise<void> {
      await pool.query('DELETE FROM groups WHERE id = $1', [groupId]);
    },

    /** Add a member (or change whether they manage the group). */
    async setMember(groupId: string, userId: string, manager: boolean): Promise<void> {
      await pool.query(
        `INSERT INTO group_members (group_id, user_id, manager) VALUES ($1, $2, $3)
         ON CONFLICT (group_id, user_id) DO UPDATE SET manager = EXCLUDED.manager`,
        [groupId, userId, manager],
      );
    },

    /** Remove a member; false when they were not one. */
    async removeMember(groupId: string, userId: string): Promise<boolean> {
      const { rowCount } = await pool.query(
        'DELETE FROM group_members WHERE group_id = $1 AND user_id = $2',
        [groupId, userId],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}
export type OwnershipRepo = ReturnType<typeof createOwnershipRepo>;

declare module 'fastify' {
  interface FastifyInstance {
    ownershipRepo: OwnershipRepo;
  }
}

export default fp(
  async (app) => {
    app.decorate('ownershipRepo', createOwnershipRepo(app.pg));
  },
  { name: 'ownership-repo', dependencies: ['postgres'] },
);
