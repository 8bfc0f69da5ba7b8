import fp from 'fastify-plugin';
import type pg from 'pg';
import {
  FreeLoaderError,
  MORSEL_SIZE,
  type DatasetState,
  type DatasetView,
  type FolderView,
  type Listing,
  type PlacementPolicy,
} from '@freeloader/protocol';
import { withTransaction, type Queryable } from '../db/pool.js';
import {
  accessFields,
  datasetAccessColumns,
  FOLDER_ACCESS_COLUMNS,
  FOLDER_SUBTREE_COLUMNS,
  type AccessRow,
  type ShareRow,
} from './ownership.js';
import { ROOT_FOLDER_ID, splitPath } from './paths.js';
import { iso, isoOrNull, isPgError, UNIQUE_VIOLATION } from './rows.js';

interface DatasetRow extends AccessRow {
  id: string;
  path: string;
  source_uri: string | null;
  size_bytes: number;
  morsel_size: number;
  etag: string | null;
  last_modified: string | null;
  state: DatasetState;
  cached_bytes: number;
  error: string | null;
  created_at: Date;
  last_access_at: Date | null;
  donor_count: number;
  placement_policy: PlacementPolicy | null;
  replicas: number;
  availability_target: number | null;
}

const DATASET_PATH = `CASE WHEN f.path = '' THEN d.name ELSE f.path || '/' || d.name END`;
const SELECT_DATASETS = `
  SELECT d.id, ${DATASET_PATH} AS path, ${datasetAccessColumns(DATASET_PATH)},
         d.source_uri, d.size_bytes, d.morsel_size, d.etag, d.last_modified, d.state,
         d.cached_bytes, d.error, d.created_at, d.last_access_at, d.placement_policy,
         d.replicas, d.availability_target,
         (SELECT count(DISTINCT u)::int FROM placement_extents pe, unnest(pe.donors) AS u
          WHERE pe.dataset_id = d.id) AS donor_count
  FROM datasets d CROSS JOIN LATERAL folder_path(d.folder_id) AS f(path)`;

const toDataset = (r: DatasetRow): DatasetView => ({
  id: r.id,
  path: r.path,
  sourceUri: r.source_uri,
  sizeBytes: r.size_bytes,
  morselSize: r.morsel_size,
  etag: r.etag,
  lastModified: r.last_modified,
  state: r.state,
  cachedBytes: r.cached_bytes,
  error: r.error,
  createdAt: iso(r.created_at),
  lastAccessAt: isoOrNull(r.last_access_at),
  donorCount: r.donor_count,
  ...(r.placement_policy ? { policy: r.placement_policy } : {}),
  replicas: r.replicas,
  availabilityTarget: r.availability_target,
  ...accessFields(r),
});

interface FolderRow extends AccessRow {
  id: string;
  path: string;
  created_at: Date;
}
const SELECT_FOLDERS = `SELECT fo.id, folder_path(fo.id) AS path, fo.created_at, ${FOLDER_ACCESS_COLUMNS}
  FROM folders fo`;
const toFolder = (r: FolderRow): FolderView => ({
  id: r.id,
  path: r.path,
  createdAt: iso(r.created_at),
  ...accessFields(r),
});

/**
 * The "no such folder" answer of a listing; also what a caller who may not see the folder gets.
 *
 * @example throw noFolder('/climate/') // FOLDER_NOT_FOUND 'no folder "climate"'
 */
export const noFolder = (path: string | undefined): FreeLoaderError =>
  new FreeLoaderError('FOLDER_NOT_FOUND', `no folder "${splitPath(path).join('/')}"`);

interface SubtreeRow {
  subtree_owners: (string | null)[];
  subtree_shares: ShareRow[];
}
const toListedFolder = (f: FolderRow & SubtreeRow): ListedFolder => ({
  ...toFolder(f),
  subtree: { ownerIds: f.subtree_owners, shares: f.subtree_shares },
});

/** A folder in a listing, with what seeing it depends on (see canSee). */
export interface ListedFolder extends FolderView {
  /** Owners of everything in it, and shares on, below and above it (permissions.ts's Subtree). */
  subtree: { ownerIds: (string | null)[]; shares: ShareRow[] };
}

export interface NewDataset {
  /** Full namespace path; missing parent folders are created. */
  path: string;
  sourceUri?: string | null;
  sizeBytes: number;
  morselSize?: number;
  etag?: string | null;
  lastModified?: string | null;
  state?: DatasetState;
  /** The owning user (the importer); absent or null: only admins manage it. */
  ownerId?: string | null;
  /** Parent folders from this depth on must be new (auth/create-access.ts checked the rest). */
  newFrom?: number;
}

/** The folder id at `names` (walked in one recursive query), or null when any level is missing. */
async function resolveFolder(db: Queryable, names: readonly string[]): Promise<string | null> {
  const { rows } = await db.query<{ id: string; depth: number }>(
    `WITH RECURSIVE walk(id, depth) AS (
       SELECT $1::uuid, 0
       UNION ALL
       SELECT f.id, w.depth + 1 FROM walk w
       JOIN folders f ON f.parent_id = w.id AND f.name = ($2::text[])[w.depth + 1]
       WHERE w.depth < cardinality($2::text[]))
     SELECT id, depth FROM walk ORDER BY depth DESC LIMIT 1`,
    [ROOT_FOLDER_ID, names],
  );
  const deepest = rows[0]!;
  return deepest.depth === names.length ? deepest.id : null;
}

async function datasetNamed(db: Queryable, folderId: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM datasets WHERE folder_id = $1 AND name = $2', [
    folderId,
    name,
  ]);
  return (rowCount ?? 0) > 0;
}

/**
 * mkdir -p inside a transaction; returns the deepest folder's id. Levels from `newFrom` on must
 * be new (a name taken meanwhile is ALREADY_EXISTS, not passed through): the caller checked
 * that it may see the levels above and create in the last of them (auth/create-access.ts).
 */
async function ensureFolders(
  tx: Queryable,
  names: readonly string[],
  ownerId: string | null,
  newFrom = Infinity,
): Promise<string> {
  let parent = ROOT_FOLDER_ID;
  for (const [i, name] of names.entries()) {
    const at = names.slice(0, i + 1).join('/');
    if (await datasetNamed(tx, parent, name)) {
      throw new FreeLoaderError('ALREADY_EXISTS', `"${at}" is a dataset, not a folder`);
    }
    const { rows } = await tx.query<{ id: string; made: boolean }>(
      `WITH ins AS (INSERT INTO folders (parent_id, name, owner_id) VALUES ($1, $2, $3)
                    ON CONFLICT (parent_id, name) DO NOTHING RETURNING id)
       SELECT id, true AS made FROM ins
       UNION ALL SELECT id, false FROM folders WHERE parent_id = $1 AND name = $2`,
      [parent, name, ownerId],
    );
    if (i >= newFrom && rows[0]?.made !== true) {
      throw new FreeLoaderError('ALREADY_EXISTS', `"${at}" is taken`);
    }
    // A racing mkdir that committed during our INSERT is invisible to this statement's
    // snapshot; a fresh statement sees it.
    const id =
      rows[0]?.id ??
      (
        await tx.query<{ id: string }>(
          'SELECT id FROM folders WHERE parent_id = $1 AND name = $2',
          [parent, name],
        )
      ).rows[0]!.id;
    parent = id;
  }
  return parent;
}

/** The namespace: folders and datasets addressed by slash-separated paths. */
export function createNamespaceRepo(pool: pg.Pool) {
  return {
    /** Folders and datasets directly under `path` ('' for the root); FOLDER_NOT_FOUND if none. */
    async list(
      path: string | undefined,
    ): Promise<Omit<Listing, 'folders'> & { folders: ListedFolder[] }> {
      const names = splitPath(path);
      const folderId = await resolveFolder(pool, names);
      if (!folderId) throw noFolder(path);
      const [folders, datasets] = await Promise.all([
        pool.query<FolderRow & SubtreeRow>(
          `SELECT * FROM (SELECT fo.name, ${FOLDER_SUBTREE_COLUMNS}, x.*
                          FROM folders fo JOIN (${SELECT_FOLDERS}) x ON x.id = fo.id
                          WHERE fo.parent_id = $1) l ORDER BY l.name`,
          [folderId],
        ),
        pool.query<DatasetRow>(`${SELECT_DATASETS} WHERE d.folder_id = $1 ORDER BY d.name`, [
          folderId,
        ]),
      ]);
      return {
        path: names.join('/'),
        folders: folders.rows.map(toListedFolder),
        datasets: datasets.rows.map(toDataset),
      };
    },

    /**
     * Create `path` and any missing parents (owned by `ownerId`); returns the folder. Levels
     * from `newFrom` on must be new (see ensureFolders).
     */
    async mkdirp(
      path: string,
      ownerId: string | null = null,
      newFrom?: number,
    ): Promise<FolderView> {
      const names = splitPath(path);
      const id = await withTransaction(pool, (tx) => ensureFolders(tx, names, ownerId, newFrom));
      const { rows } = await pool.query<FolderRow>(`${SELECT_FOLDERS} WHERE fo.id = $1`, [id]);
      return toFolder(rows[0]!);
    },

    /** The folder at `path` ('' is the root) with what seeing it depends on (see canSee), or null. */
    async listedFolderAt(path: string | undefined): Promise<ListedFolder | null> {
      const id = await resolveFolder(pool, splitPath(path));
      if (!id) return null;
      const { rows } = await pool.query<FolderRow & SubtreeRow>(
        `SELECT ${FOLDER_SUBTREE_COLUMNS}, x.*
           FROM folders fo JOIN (${SELECT_FOLDERS}) x ON x.id = fo.id WHERE fo.id = $1`,
        [id],
      );
      return rows[0] ? toListedFolder(rows[0]) : null;
    },

    async folderAt(path: string): Promise<FolderView | null> {
      const id = await resolveFolder(pool, splitPath(path));
      if (!id) return null;
      const { rows } = await pool.query<FolderRow>(`${SELECT_FOLDERS} WHERE fo.id = $1`, [id]);
      return rows[0] ? toFolder(rows[0]) : null;
    },

    /** Register a dataset at `path` (parents created); ALREADY_EXISTS when the name is taken. */
    async createDataset(input: NewDataset): Promise<DatasetView> {
      const names = splitPath(input.path);
      const name = names.pop();
      if (!name) throw new FreeLoaderError('VALIDATION_FAILED', 'a dataset needs a name');
      const id = await withTransaction(pool, async (tx) => {
        const folderId = await ensureFolders(tx, names, input.ownerId ?? null, input.newFrom);
        const clash = await tx.query('SELECT 1 FROM folders WHERE parent_id = $1 AND name = $2', [
          folderId,
          name,
        ]);
        if (clash.rowCount) {
          throw new FreeLoaderError('ALREADY_EXISTS', `"${input.path}" is a folder`);
        }
        const { rows } = await tx.query<{ id: string }>(
          `INSERT INTO datasets (folder_id, name, source_uri, size_bytes, morsel_size, etag,
                                 last_modified, state, owner_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
          [
            folderId,
            name,
            input.sourceUri ?? null,
            input.sizeBytes,
            input.morselSize ?? MORSEL_SIZE,
            input.etag ?? null,
            input.lastModified ?? null,
            input.state ?? 'importing',
            input.ownerId ?? null,
          ],
        );
        return rows[0]!.id;
      }).catch((e: unknown) => {
        if (isPgError(e, UNIQUE_VIOLATION)) {
          throw new FreeLoaderError('ALREADY_EXISTS', `dataset "${input.path}" already exists`);
        }
        throw e;
      });
      return (await this.get(id))!;
    },

    async get(id: string): Promise<DatasetView | null> {
      const { rows } = await pool.query<DatasetRow>(`${SELECT_DATASETS} WHERE d.id = $1`, [id]);
      return rows[0] ? toDataset(rows[0]) : null;
    },

    /** The datasets among `ids` that exist (any order; for permission checks on listings). */
    async getMany(ids: readonly string[]): Promise<DatasetView[]> {
      if (ids.length === 0) return [];
      const { rows } = await pool.query<DatasetRow>(
        `${SELECT_DATASETS} WHERE d.id = ANY($1::uuid[])`,
        [ids],
      );
      return rows.map(toDataset);
    },

    async getByPath(path: string): Promise<DatasetView | null> {
      const names = splitPath(path);
      const name = names.pop();
      if (!name) return null;
      const folderId = await resolveFolder(pool, names);
      if (!folderId) return null;
      const { rows } = await pool.query<DatasetRow>(
        `${SELECT_DATASETS} WHERE d.folder_id = $1 AND d.name = $2`,
        [folderId, name],
      );
      return rows[0] ? toDataset(rows[0]) : null;
    },

    /**
     * Datasets whose path contains `query` (case-insensitive, literally: `%` and `_` are not
     * wildcards), by path; every dataset when the query is empty.
     */
    async search(query: string, limit: number | null): Promise<DatasetView[]> {
      const pattern = `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const { rows } = await pool.query<DatasetRow>(
        `SELECT * FROM (${SELECT_DATASETS}) s WHERE s.path ILIKE $1 ORDER BY s.path LIMIT $2`,
        [pattern, limit],
      );
      return rows.map(toDataset);
    },

    /** Note a read (for eviction order later). */
    async touch(id: string): Promise<void> {
      await pool.query('UPDATE datasets SET last_access_at = now() WHERE id = $1', [id]);
    },

    /** Move a dataset to `state`; `error` and `cachedBytes` when given. False if it is gone. */
    async setState(
      id: string,
      state: DatasetState,
      extra: { error?: string | null; cachedBytes?: number } = {},
    ): Promise<boolean> {
      const { rowCount } = await pool.query(
        `UPDATE datasets SET state = $2,
           error = CASE WHEN $3::boolean THEN $4 ELSE error END,
           cached_bytes = coalesce($5, cached_bytes)
         WHERE id = $1`,
        [id, state, extra.error !== undefined, extra.error ?? null, extra.cachedBytes ?? null],
      );
      return rowCount === 1;
    },
  };
}
export type NamespaceRepo = ReturnType<typeof createNamespaceRepo>;

declare module 'fastify' {
  interface FastifyInstance {
    namespaceRepo: NamespaceRepo;
  }
}

export default fp(
  async (app) => {
    app.decorate('namespaceRepo', createNamespaceRepo(app.pg));
  },
  { name: 'namespace-repo', dependencies: ['postgres'] },
);
