import type { FastifyRequest } from 'fastify';
import { FreeLoaderError, type FolderView } from '@freeloader/protocol';
import { splitPath } from '../repositories/paths.js';
import type { ListedFolder } from '../repositories/namespace.js';
import { folderVisible, itemOf, markRefused, principalFor } from './access.js';
import { can, type Principal } from './permissions.js';

/**
 * Where the caller may create a folder or a dataset (issue 17 leftovers: names that leak).
 *
 * The model is a Unix directory tree: a path is walked down through the folders the caller may
 * see (mkdir -p passes through them, whoever owns them); the first level that is missing, hidden
 * from the caller, or a dataset is where something new would be made, inside the last visible
 * folder. The caller must be allowed to create there — anyone at the root, else whoever may
 * manage that folder (its owner, the managers of a group it is shared with `--manage`, an
 * admin) — and that is checked *before* the name: a caller who may not create in a folder gets
 * the same 403 whether the name is free, visible or hidden. Only someone allowed to create in a
 * folder learns that a hidden name in it is taken (409 "… is taken", the same for a folder and
 * a dataset), as `ls` shows a directory's names to whoever may write it: the names at the root,
 * and in your own folders.
 */
export interface CreatePlan {
  /** Path levels that exist and are visible (walked through); levels from here on are new. */
  newFrom: number;
}

/** Anyone may create at the root; elsewhere whoever may manage the folder. */
const mayCreateIn = (p: Principal, folder: ListedFolder): boolean =>
  folder.path === '' ? p.kind === 'user' : can(p, 'manage', itemOf(folder));

function forbidden(folder: FolderView): FreeLoaderError {
  const by = folder.owner ? `its owner ${folder.owner}` : 'its owner';
  return new FreeLoaderError(
    'FORBIDDEN',
    `you may not create in ${folder.path}: only ${by}, a manager of a group it is shared with ` +
      'to manage, or an admin may (ask for a share with --manage, or use a folder of your own)',
  );
}

/**
 * Check that the caller may create a `kind` at `path`; throws FORBIDDEN (may not create in the
 * last visible folder) or ALREADY_EXISTS (the name is taken) as described on {@link CreatePlan}.
 * Refusals over something hidden are marked refused for the audit log.
 *
 * @example const plan = await requireCreatable(req, 'climate/cmip6/tas.nc', 'dataset');
 *          await repo.createDataset({ path, newFrom: plan.newFrom, … });
 */
export async function requireCreatable(
  req: FastifyRequest,
  path: string,
  kind: 'folder' | 'dataset',
): Promise<CreatePlan> {
  const repo = req.server.namespaceRepo;
  const names = splitPath(path);
  if (kind === 'dataset' && names.length === 0) {
    throw new FreeLoaderError('VALIDATION_FAILED', 'a dataset needs a name');
  }
  const folders = kind === 'dataset' ? names.length - 1 : names.length;
  let parent = (await repo.listedFolderAt(''))!;
  /** The folder the walk stopped at (hidden from the caller), or null where none exists. */
  let stoppedAt: ListedFolder | null = null;
  let depth = 0;
  for (; depth < folders; depth++) {
    const next = await repo.listedFolderAt(names.slice(0, depth + 1).join('/'));
    if (!next || !(await folderVisible(req, next))) {
      stoppedAt = next ?? null;
      break;
    }
    parent = next;
  }
  // mkdir -p of a folder the caller sees: nothing to create, its view is the answer.
  if (kind === 'folder' && depth === names.length) return { newFrom: depth };

  const p = await principalFor(req);
  if (!mayCreateIn(p, parent)) {
    // The same answer for a free, a visible and a hidden name: audited as refused either way.
    throw forbidden(parent);
  }
  const at = names.slice(0, depth + 1).join('/');
  const leaf = depth === names.length - 1 && kind === 'dataset';
  const dataset = await repo.getByPath(at);
  if (dataset && can(p, 'read', itemOf(dataset))) {
    throw new FreeLoaderError(
      'ALREADY_EXISTS',
      leaf ? `dataset "${at}" already exists` : `"${at}" is a dataset, not a folder`,
    );
  }
  // A dataset's own name was not walked; a folder level's was (where the walk stopped).
  const folder = leaf ? await repo.listedFolderAt(at) : stoppedAt;
  if (leaf && folder && (await folderVisible(req, folder))) {
    throw new FreeLoaderError('ALREADY_EXISTS', `"${at}" is a folder`);
  }
  // Below `depth` the walk stopped at a missing or hidden folder: hidden is a taken name.
  if (dataset || folder) {
    markRefused(req);
    throw new FreeLoaderError('ALREADY_EXISTS', `"${at}" is taken`);
  }
  return { newFrom: depth };
}
