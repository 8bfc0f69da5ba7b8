import { describe, expect, it } from 'vitest';
import { FreeLoaderError } from '@freeloader/protocol';
import { FsError, errnoOf, withDeadline } from './file-system.js';

describe('errnoOf', () => {
  it.each([
    [new FsError('EROFS', 'x'), 'EROFS'],
    [new FreeLoaderError('DATASET_NOT_FOUND', 'x'), 'ENOENT'],
    [new FreeLoaderError('FOLDER_NOT_FOUND', 'x'), 'ENOENT'],
    [new FreeLoaderError('UNAUTHENTICATED', 'x'), 'EACCES'],
    [new FreeLoaderError('UNAVAILABLE', 'every donor and the source failed'), 'EIO'],
    [new FreeLoaderError('HASH_MISMATCH', 'x'), 'EIO'],
    [new Error('anything else'), 'EIO'],
  ])('%s → %s', (e, errno) => {
    expect(errnoOf(e)).toBe(errno);
  });
});

describe('withDeadline', () => {
  it('passes a result through before the deadline', async () => {
    expect(await withDeadline(Promise.resolve(7), 1000, 'x')).toBe(7);
  });

  it('fails with EIO and tells the work to stop when the deadline wins', async () => {
    let aborted = false;
    const never = new Promise<number>(() => undefined);
    await expect(withDeadline(never, 20, 'read x', () => (aborted = true))).rejects.toMatchObject({
      errno: 'EIO',
      message: 'read x timed out after 20 ms',
    });
    expect(aborted).toBe(true);
  });
});
