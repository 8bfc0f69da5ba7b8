import { FreeLoaderError, MAX_PATH_DEPTH } from '@freeloader/protocol';
import { nameProblem, printable } from './path-problem.js';

/**
 * Split a namespace path into names. Leading and trailing slashes are tolerated ("/a/b/" is
 * "a/b"); empty, "." and ".." segments and control characters are not. '' is the root.
 *
 * @example splitPath('climate/cmip6') // ['climate', 'cmip6']
 */
export function splitPath(path: string | undefined): string[] {
  const trimmed = (path ?? '').replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return [];
  const names = trimmed.split('/');
  if (names.length > MAX_PATH_DEPTH) {
    throw new FreeLoaderError('VALIDATION_FAILED', `path is deeper than ${MAX_PATH_DEPTH} levels`);
  }
  for (const name of names) {
    const problem = nameProblem(name);
    if (problem) {
      throw new FreeLoaderError('VALIDATION_FAILED', `path "${printable(path ?? '')}" ${problem}`);
    }
  }
  return names;
}

/** The id of the namespace root folder (a fixed row created by the first migration). */
export const ROOT_FOLDER_ID = '00000000-0000-0000-0000-000000000000';
