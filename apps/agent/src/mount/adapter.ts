import type { ReadOnlyFileSystem } from '../dataset-fs/file-system.js';

export interface MountOptions {
  /** Let other users read the mount (FUSE `allow_other`; needs `user_allow_other` unless root). */
  allowOther?: boolean;
  /** Longest any one operation may take before the application gets EIO (milliseconds). */
  opTimeoutMs: number;
  /** Raise the kernel's read-ahead for the mount to this (KiB; root only); default: the kernel's. */
  kernelReadAheadKb?: number;
  log?: (message: string) => void;
}

/** A live mount. */
export interface Mounted {
  readonly dir: string;
  /** Settles when the kernel side has gone: unmounted by us, by `freeloader unmount`, or lazily. */
  readonly ended: Promise<void>;
  /**
   * Unmount; when files are still open, detach lazily and wait up to `drainMs` for readers to
   * finish before resolving anyway (the process may then exit: the remaining readers get EIO).
   */
  unmount(opts?: { drainMs?: number }): Promise<void>;
}

/**
 * How a platform puts a {@link ReadOnlyFileSystem} into the OS's namespace. Everything above
 * this interface (namespace, cache, prefetch, verification) is shared; an adapter only
 * translates operations, errors and mount options.
 *
 * Platforms (see README.md beside this file):
 * - Linux: libfuse 2 through node-fuse-bindings — implemented and tested.
 * - macOS: macFUSE speaks the same libfuse 2 API, so the same adapter should work once macFUSE
 *   is installed and node-fuse-bindings is built against it — not tested.
 * - Windows: WinFsp needs its own binding — not implemented.
 */
export interface MountAdapter {
  /** e.g. `fuse (libfuse 2)`. */
  readonly name: string;
  /** Why mounting cannot work here and exactly what to install; undefined when it can. */
  unavailable(): string | undefined;
  mount(dir: string, fs: ReadOnlyFileSystem, opts: MountOptions): Promise<Mounted>;
}
