import { MAX_NAME_LENGTH, MAX_PATH_DEPTH, MAX_PATH_LENGTH } from '@freeloader/protocol';

/**
 * What is wrong with a namespace path, in words, or undefined when nothing is. It states the same
 * rules as the `NamespacePath` schema's pattern (plus the depth and per-name limits that
 * `splitPath` enforces), so a rejected path gets a reason a person can act on instead of the regex.
 *
 * @example pathProblem('/climate/tas.nc') // "must not start with '/' (paths are relative, like climate/tas.nc)"
 * @example pathProblem('climate/tas.nc')  // undefined
 */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return 'must not be empty';
  if (path.length > MAX_PATH_LENGTH) {
    return `is ${path.length} characters long; at most ${MAX_PATH_LENGTH} are allowed`;
  }
  if (path.startsWith('/')) {
    return "must not start with '/' (paths are relative, like climate/tas.nc)";
  }
  if (path.endsWith('/')) return "must not end with '/'";
  if (path.includes('//')) return "must not contain an empty folder name ('//')";
  const names = path.split('/');
  if (names.length > MAX_PATH_DEPTH) return `must not be deeper than ${MAX_PATH_DEPTH} levels`;
  for (const name of names) {
    const problem = nameProblem(name);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * What is wrong with one name (a segment between slashes), in words, or undefined.
 *
 * @example nameProblem('..') // "must not have '..' as a folder or file name"
 */
export function nameProblem(name: string): string | undefined {
  if (name === '') return "must not contain an empty folder name ('//')";
  if (name === '.' || name === '..') return `must not have '${name}' as a folder or file name`;
  // eslint-disable-next-line no-control-regex
  const control = /[\x00-\x1f]/.exec(name);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).padStart(2, '0');
    return `must not contain control characters (found \\x${code} in "${printable(name)}")`;
  }
  if (name.length > MAX_NAME_LENGTH) {
    return `has a name of ${name.length} characters; at most ${MAX_NAME_LENGTH} are allowed`;
  }
  return undefined;
}

/** A value for an error message: control characters escaped, long values cut. */
export function printable(value: string, max = 80): string {
  // eslint-disable-next-line no-control-regex
  const control = /[\x00-\x1f]/g;
  const escaped = value.replace(
    control,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
  return escaped.length > max ? `${escaped.slice(0, max)}…` : escaped;
}
