import { isFreeLoaderError, type ErrorCode } from '@freeloader/protocol';

/**
 * The platform-neutral, read-only file system a mount adapter serves. Every method is async and
 * rejects with an {@link FsError}; adapters turn those into the platform's error numbers, and
 * apply the per-operation timeout, so implementations never need to know which kernel asks.
 */
export interface ReadOnlyFileSystem {
  getattr(path: string): Promise<FileStat>;
  /** Names directly under a directory (no `.` or `..`). */
  readdir(path: string): Promise<string[]>;
  /** Open a file for reading; resolves with a handle passed back to read and release. */
  open(path: string, flags: number): Promise<number>;
  /**
   * Fill `target` with the bytes at `position` (fewer only at the end of the file); resolves with
   * how many were written. `target` may be memory the kernel lends for this call only: write to
   * it before resolving and never after `signal` aborts (the deadline answered the kernel).
   */
  read(handle: number, target: Buffer, position: number, signal?: AbortSignal): Promise<number>;
  /**
   * Optional fast path tried before {@link read}: the byte count when the read can be answered
   * from memory right now, undefined when it has to wait (then `read` is called).
   */
  readCached?(handle: number, target: Buffer, position: number): number | undefined;
  release(handle: number): Promise<void>;
  statfs(): Promise<FsStat>;
}

export interface FileStat {
  kind: 'file' | 'dir';
  size: number;
  /** Permission bits only (e.g. 0o444); the adapter adds the file type. */
  perm: number;
  mtime: Date;
  atime: Date;
  ctime: Date;
}

export interface FsStat {
  blockSize: number;
  blocks: number;
  blocksFree: number;
  files: number;
  nameMax: number;
}

/** The POSIX errors this file system produces. */
export type Errno = 'ENOENT' | 'ENOTDIR' | 'EISDIR' | 'EACCES' | 'EROFS' | 'EBADF' | 'EIO';

/** A file-system error carrying the errno an application will see. */
export class FsError extends Error {
  constructor(
    readonly errno: Errno,
    message: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'FsError';
  }
}

/** FreeLoader codes that mean "no such file": everything else the manager or donors say is EIO. */
const NOT_FOUND: ReadonlySet<ErrorCode> = new Set([
  'NOT_FOUND',
  'DATASET_NOT_FOUND',
  'FOLDER_NOT_FOUND',
]);
const DENIED: ReadonlySet<ErrorCode> = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'BAD_CREDENTIALS']);

/**
 * The errno for any failure: FsError keeps its own, FreeLoader's not-found codes are ENOENT,
 * refused credentials EACCES, anything else (donors, source and retries exhausted, timeouts) EIO.
 *
 * @example errnoOf(new FreeLoaderError('FOLDER_NOT_FOUND', 'x')) // 'ENOENT'
 */
export function errnoOf(e: unknown): Errno {
  if (e instanceof FsError) return e.errno;
  if (isFreeLoaderError(e)) {
    if (NOT_FOUND.has(e.code)) return 'ENOENT';
    if (DENIED.has(e.code)) return 'EACCES';
  }
  return 'EIO';
}

/**
 * Race `work` against a deadline: every wait the kernel sees is bounded, so an application gets
 * EIO instead of hanging. `onTimeout` runs when the deadline wins (abort the work there).
 */
export async function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  what: string,
  onTimeout?: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new FsError('EIO', `${what} timed out after ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
