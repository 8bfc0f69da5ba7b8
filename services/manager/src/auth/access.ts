import type { FastifyRequest } from 'fastify';
import {
  FreeLoaderError,
  READABLE_SCAN_ROWS,
  type DatasetView,
  type FolderView,
} from '@freeloader/protocol';
import { can, canSee, type Action, type Item, type Principal } from './permissions.js';
import type { ListedFolder } from '../repositories/namespace.js';

type Owned = Pick<DatasetView | FolderView, 'ownerId' | 'sharing'>;

/** The permission view of a dataset or folder as the repositories return it. */
export const itemOf = (view: Owned, holders?: readonly string[]): Item => ({
  ownerId: view.ownerId ?? null,
  shares: (view.sharing ?? []).map((s) => ({ groupId: s.groupId, manage: s.manage })),
  ...(holders ? { holders } : {}),
});

const principals = new WeakMap<FastifyRequest, Promise<Principal>>();

/** The caller as permissions.ts sees it (memberships loaded once per request). */
export function principalFor(req: FastifyRequest): Promise<Principal> {
  let p = principals.get(req);
  if (!p) {
    p = loadPrincipal(req);
    principals.set(req, p);
  }
  return p;
}

/**
 * The caller with memberships read now, not memoized: for a request that lasts (an event
 * stream), so a group joined or left meanwhile counts.
 *
 * @example const p = await loadPrincipal(req); // { kind: 'user', id, role, groups: [...] }
 */
export function loadPrincipal(req: FastifyRequest): Promise<Principal> {
  const user = req.user;
  if (req.agent) return Promise.resolve({ kind: 'agent' as const, id: req.agent.id });
  if (!user) return Promise.reject(new FreeLoaderError('UNAUTHENTICATED', 'log in first'));
  return req.server.ownershipRepo
    .membershipsOf(user.id)
    .then((groups) => ({ kind: 'user' as const, id: user.id, role: user.role, groups }));
}

const VERB: Record<Action, string> = { read: 'read', manage: 'change', chown: 'give away' };

/**
 * The error a route answers for a dataset or folder that is not there. A caller who may not
 * read an item gets exactly this too, so a 403 never tells a curious colleague that a name
 * exists (issue 17 leftovers); a caller who may read but not change gets FORBIDDEN.
 */
export type Missing = () => FreeLoaderError;

/**
 * Requests refused as "not there" to a caller who may not read the item: the audit hook records
 * them as refused like a 403, so an admin still sees someone probing names.
 */
const refusedAsMissing = new WeakSet<FastifyRequest>();

/** Was `req` answered "not there" only because the caller may not read the item? */
export const wasRefusedAsMissing = (req: FastifyRequest): boolean => refusedAsMissing.has(req);

/**
 * Record `req` as refused over an item the caller may not read (answered as missing, or as a
 * taken name), so the audit log shows it as `refused` like a 403.
 */
export const markRefused = (req: FastifyRequest): void => void refusedAsMissing.add(req);

function hide(req: FastifyRequest, missing: Missing): FreeLoaderError {
  markRefused(req);
  return missing();
}

/**
 * The "no such dataset" answer of the routes that take a dataset id.
 *
 * @example throw noDataset(req.params.id) // DATASET_NOT_FOUND "no dataset 3f2…"
 */
export const noDataset = (id: string): FreeLoaderError =>
  new FreeLoaderError('DATASET_NOT_FOUND', `no dataset ${id}`);

/**
 * `dataset` when the caller may take `action` on it; `missing()` when it is not there or the
 * caller may not even read it; FORBIDDEN when it may read but not take `action`. `verb` names
 * the action in the message ("delete", "pin" …). An agent reads only what it holds, imports,
 * patches or repairs.
 *
 * @example const ds = await requireDataset(req, 'manage', await repo.get(id), () => noDataset(id), 'delete')
 */
export async function requireDataset(
  req: FastifyRequest,
  action: Action,
  dataset: DatasetView | null | undefined,
  missing: Missing,
  verb = VERB[action],
): Promise<DatasetView> {
  if (!dataset) throw missing();
  const p = await principalFor(req);
  const holders =
    p.kind === 'agent' && (await req.server.ownershipRepo.agentTouches(dataset.id, p.id))
      ? [p.id]
      : [];
  const item = itemOf(dataset, holders);
  if (!can(p, 'read', item)) throw hide(req, missing);
  if (can(p, action, item)) return dataset;
  throw new FreeLoaderError('FORBIDDEN', refusal(p, action, dataset.path, dataset.owner, verb));
}

/**
 * May the caller know `folder` exists? The root always; any other folder when the caller may
 * see it in a listing (it may read the folder or something below it, see canSee).
 */
export async function folderVisible(req: FastifyRequest, folder: ListedFolder): Promise<boolean> {
  const p = await principalFor(req);
  return folder.path === '' || can(p, 'read', itemOf(folder)) || canSee(p, folder.subtree);
}

/**
 * `folder` when the caller may take `action` on it; `missing()` when it is not there or the
 * caller may not see it (see {@link folderVisible}); FORBIDDEN otherwise.
 */
export async function requireFolder(
  req: FastifyRequest,
  action: Action,
  folder: ListedFolder | null,
  missing: Missing,
  verb = VERB[action],
): Promise<ListedFolder> {
  if (!folder) throw missing();
  if (!(await folderVisible(req, folder))) throw hide(req, missing);
  const p = await principalFor(req);
  if (can(p, action, itemOf(folder))) return folder;
  throw new FreeLoaderError(
    'FORBIDDEN',
    refusal(p, action, folder.path || '/', folder.owner, verb),
  );
}

/** Why `p` may not: who may, and how to get access. */
function refusal(
  p: Principal,
  action: Action,
  path: string,
  owner: string | null | undefined,
  verb: string,
): string {
  if (p.kind === 'agent') {
    return `agent ${p.id} may not ${verb} ${path}: agents read only datasets they hold, import, patch or repair, and change them only through jobs`;
  }
  const by = owner ? `its owner ${owner}` : 'its owner';
  if (action === 'chown') return `only an admin may give ${path} to another user`;
  if (action === 'read') {
    return `you may not read ${path}: ask ${by} to share it with you (freeloader share ${path} --group GROUP)`;
  }
  return `only ${by}, a manager of a group it is shared with to manage, or an admin may ${verb} ${path}`;
}

/** The caller's view of a listing: only what it may read; each item says if it may manage. */
export async function readableOnly<T extends DatasetView>(
  req: FastifyRequest,
  datasets: readonly T[],
): Promise<T[]> {
  const p = await principalFor(req);
  return datasets
    .filter((d) => can(p, 'read', itemOf(d)))
    .map((d) => ({ ...d, mayManage: can(p, 'manage', itemOf(d)) }));
}

/** Folders the caller may see (it may read them or something below them), without subtrees. */
export async function visibleFolders(
  req: FastifyRequest,
  folders: readonly ListedFolder[],
): Promise<FolderView[]> {
  const p = await principalFor(req);
  return folders
    .filter((f) => canSee(p, f.subtree))
    .map(({ subtree: _subtree, ...f }) => ({ ...f, mayManage: can(p, 'manage', itemOf(f)) }));
}

/**
 * Which of `ids` the caller may read: `'all'` for an admin (no lookup), else the readable ones
 * (one query for the lot). An agent reads none through listings: it asks per dataset.
 *
 * @example const ok = await readableIds(req, ['d1', 'd2']); // Set { 'd1' } for its owner
 */
export async function readableIds(
  req: FastifyRequest,
  ids: Iterable<string | null>,
  principal?: Principal,
): Promise<'all' | Set<string>> {
  const p = principal ?? (await principalFor(req));
  if (p.kind === 'user' && p.role === 'admin') return 'all';
  const wanted = [...new Set([...ids].filter((id): id is string => id !== null))];
  const views = await req.server.namespaceRepo.getMany(wanted);
  return new Set(views.flatMap((v) => (can(p, 'read', itemOf(v)) ? [v.id] : [])));
}

/**
 * Rows about datasets (transfers, failures, patch sessions, evictions, repair units …) the
 * caller may read; rows of datasets gone (null id) only to admins, since their paths are all
 * that is left of them.
 *
 * @example await aboutReadable(req, [{ datasetId: 'd1' }, { datasetId: null }]) // [{ datasetId: 'd1' }] for d1's owner
 */
export function aboutReadable<T extends { datasetId: string | null }>(
  req: FastifyRequest,
  rows: readonly T[],
): Promise<T[]> {
  return readableRows(req, rows, (r) => r.datasetId);
}

/**
 * {@link aboutReadable} for rows that name their dataset otherwise (`idOf`).
 *
 * @example await readableRows(req, history.subjects, (s) => s.subject)
 */
export async function readableRows<T>(
  req: FastifyRequest,
  rows: readonly T[],
  idOf: (row: T) => string | null,
): Promise<T[]> {
  const readable = await readableIds(req, rows.map(idOf));
  if (readable === 'all') return [...rows];
  return rows.filter((r) => {
    const id = idOf(r);
    return id !== null && readable.has(id);
  });
}

/**
 * How many rows to read for a listing of `limit` rows that will be filtered for the caller:
 * `limit` for an admin (nothing is filtered), READABLE_SCAN_ROWS for anyone else.
 *
 * @example (await aboutReadable(req, await list(rowsToScan(req, 50)))).slice(0, 50)
 */
export function rowsToScan(req: FastifyRequest, limit: number): number {
  return req.user?.role === 'admin' ? limit : Math.max(limit, READABLE_SCAN_ROWS);
}

/** `view` with whether the caller may manage it (for the console's buttons). */
export async function withMayManage<T extends Owned>(req: FastifyRequest, view: T): Promise<T> {
  const p = await principalFor(req);
  return { ...view, mayManage: can(p, 'manage', itemOf(view)) };
}
