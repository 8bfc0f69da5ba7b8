import { readFile, writeFile } from 'node:fs/promises';
import { mountAt } from './mount-point.js';

/**
 * A larger kernel read-ahead for the mount (KiB), for `mount --kernel-readahead-kb`'s example
 * and tests. A FUSE mount starts at 128 KiB (the bdi default; libfuse can only lower it), and
 * the mount keeps that unless asked: the morsels themselves come from the mount's own
 * read-ahead (megabytes ahead), and a larger kernel read-ahead floods the single-threaded
 * libfuse loop with requests ahead of the reader. Measured on one AMD EPYC VM (session 21, one
 * run each): mount-loopback 1 GiB at 128 / 512 / 1024 / 4096 KiB: `dd` 0.935 / 0.871 / 0.787 /
 * 0.64–0.71 of 1 GB/s, `md5sum` 523 / 490 / 451 / 379 MB/s, `dd` from the mount's memory 1933 /
 * 2190 / 1377 / 950 MB/s; mount-lan 512 MiB W=12 `dd` 0.882 / 0.876 / 0.791 / 0.920 of the link,
 * `md5sum` 0.913 / 0.874 / 0.909 / 0.957, but W=4 `md5sum` 0.994 / 0.986 / 0.740 / 0.549. (On an
 * Intel VM, mount-lan W=12 256 MiB `dd` had 0.899 and 0.891 at 4 MiB against 0.865 and 0.859.)
 */
export const KERNEL_READ_AHEAD_KB = 4096;

/** What {@link raiseKernelReadAhead} did. */
export type ReadAheadChange =
  { changed: true; fromKb: number; toKb: number } | { changed: false; kb?: number; why: string };

/**
 * Raise the kernel's read-ahead for the mount at `dir` to `kb`, never lower it (the mount does
 * when asked with `--kernel-readahead-kb`). Only root may
 * write the setting: for anyone else, and off Linux, nothing changes and `why` says so (the
 * mount works the same, a sequential reader that computes between reads is just slower). Never
 * rejects: every failure is a `why`.
 *
 * @example await raiseKernelReadAhead('/mnt/freeloader') // { changed: true, fromKb: 128, toKb: 4096 }
 */
export async function raiseKernelReadAhead(
  dir: string,
  kb = KERNEL_READ_AHEAD_KB,
): Promise<ReadAheadChange> {
  if (process.platform !== 'linux') return { changed: false, why: 'not Linux' };
  // From the mount table, not stat(dir): a stat of the mount's root from the process serving it
  // would cache the root's attributes for a second, and a mount killed within it would still
  // look alive to the next `stat` (not ENOTCONN, which is how a stale mount is recognised).
  const mount = await mountAt(dir);
  if (!mount) return { changed: false, why: `nothing is mounted at ${dir}` };
  const file = `/sys/class/bdi/${mount.device}/read_ahead_kb`;
  let fromKb: number;
  try {
    fromKb = Number((await readFile(file, 'utf8')).trim());
  } catch (e) {
    return { changed: false, why: `${file}: ${errorCode(e)}` };
  }
  if (!(fromKb < kb)) return { changed: false, kb: fromKb, why: 'already as large' };
  try {
    await writeFile(file, String(kb));
  } catch (e) {
    return { changed: false, kb: fromKb, why: `${file}: ${errorCode(e)}` };
  }
  return { changed: true, fromKb, toKb: kb };
}

/** EACCES, ENOENT, … or the error's message. */
function errorCode(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e));
}
