import { describe, expect, it } from 'vitest';
import { NamespacePath } from '@freeloader/protocol';
import { pathProblem } from './path-problem.js';

const PATTERN = new RegExp(NamespacePath.pattern!);

describe('pathProblem', () => {
  it.each([
    ['', 'must not be empty'],
    ['/climate/tas.nc', "must not start with '/' (paths are relative, like climate/tas.nc)"],
    ['/', "must not start with '/' (paths are relative, like climate/tas.nc)"],
    ['climate/', "must not end with '/'"],
    ['climate//tas.nc', "must not contain an empty folder name ('//')"],
    ['.', "must not have '.' as a folder or file name"],
    ['..', "must not have '..' as a folder or file name"],
    ['climate/../tas.nc', "must not have '..' as a folder or file name"],
    ['./tas.nc', "must not have '.' as a folder or file name"],
    ['climate/..', "must not have '..' as a folder or file name"],
    ['tas\n.nc', 'must not contain control characters (found \\x0a in "tas\\x0a.nc")'],
    ['a\tb', 'must not contain control characters (found \\x09 in "a\\x09b")'],
    ['x'.repeat(4097), 'is 4097 characters long; at most 4096 are allowed'],
    [Array(33).fill('d').join('/'), 'must not be deeper than 32 levels'],
    ['x'.repeat(256), 'has a name of 256 characters; at most 255 are allowed'],
  ])('%j %s', (path, words) => expect(pathProblem(path)).toBe(words));

  it.each(['climate/tas.nc', 'tas 1.nc', 'a/b/c', '...', 'a/.hidden', 'ünïcode/日本.nc', 'a..b'])(
    'accepts %j',
    (path) => expect(pathProblem(path)).toBeUndefined(),
  );

  // The words must never disagree with the schema: everything the pattern rejects gets a reason.
  it.each([
    '/x',
    'x/',
    'x//y',
    '.',
    '..',
    'a/./b',
    'a/../b',
    '../a',
    'a\u0000b',
    'a\u001fb',
    'tas.nc',
    'a/b',
    '...',
    'a/.b/c',
  ])('agrees with the NamespacePath pattern on %j', (path) =>
    expect(pathProblem(path) === undefined).toBe(PATTERN.test(path)),
  );
});
