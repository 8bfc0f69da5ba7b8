import { FreeLoaderError, MAX_NAME_LENGTH, MAX_PATH_DEPTH } from '@freeloader/protocol';

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
    // eslint-disable-next-line no-control-regex
    if (name === '' || name === '.' || name === '..' || /[\x00-\x1f]/.test(name)) {
      throw new FreeLoaderError('VALIDATION_FAILED', `not a valid path: "${path}"`);
    }
    if (name.length > MAX_NAME_LENGTH) {
      throw new FreeLoaderError(
        'VALIDATION_FAILED',
        `name longer than ${MAX_NAME_LENGTH}: "${name}"`,
      );
    }
  }
  return names;
}

/** The id of the namespace root folder (a fixed row created by the first migration). */
export const ROOT_FOLDER_ID = '00000000-0000-0000-0000-000000000000';
