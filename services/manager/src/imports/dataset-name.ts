import { FreeLoaderError, MAX_NAME_LENGTH } from '@freeloader/protocol';

/**
 * The default namespace name for an imported URI: its last path segment, decoded.
 *
 * @example defaultDatasetName('https://h/data/tas%201.nc?x=1') === 'tas 1.nc'
 */
export function defaultDatasetName(uri: string): string {
  let segment = '';
  try {
    const path = new URL(uri).pathname;
    segment = decodeURIComponent(path.split('/').filter(Boolean).pop() ?? '');
  } catch {
    segment = '';
  }
  // eslint-disable-next-line no-control-regex
  const clean = segment.replace(/[\x00-\x1f/]/g, '_').slice(0, MAX_NAME_LENGTH);
  if (clean === '' || clean === '.' || clean === '..') {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `cannot derive a name from "${uri}": pass a name`,
    );
  }
  return clean;
}
