import { readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { FreeLoaderError } from '@freeloader/protocol';
import { FS_TYPE, mountAt } from './mount-point.js';

/**
 * Resolve once `dir` is our FUSE file system in the kernel's mount table and a readdir of it is
 * answered: then files under it are visible to any process. Throws TIMEOUT after `timeoutMs`.
 * The readdir goes through libuv's thread pool, so the event loop that answers the kernel stays
 * free to serve it.
 *
 * @example await waitUntilAnswering('/mnt/freeloader', 30_000); // now `ls /mnt/freeloader` works
 */
export async function waitUntilAnswering(dir: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = 'not in the mount table yet';
  for (;;) {
    const entry = await mountAt(dir);
    if (entry?.fsType === FS_TYPE) {
      try {
        await readdir(dir);
        return;
      } catch (e) {
        last = e instanceof Error ? e.message : String(e);
      }
    } else if (entry) {
      last = `${entry.fsType} is mounted there`;
    }
    if (performance.now() > deadline) {
      throw new FreeLoaderError(
        'TIMEOUT',
        `mounting ${dir}: the mount did not answer within ${timeoutMs / 1000} s (${last})`,
      );
    }
    await sleep(20);
  }
}
