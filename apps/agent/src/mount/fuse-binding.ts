import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

/** Callback of one FUSE operation: 0 or a negative errno, then the result. */
export type FuseCallback<T = never> = (code: number, result?: T) => void;

export interface FuseStat {
  mtime: Date;
  atime: Date;
  ctime: Date;
  size: number;
  mode: number;
  nlink: number;
  uid: number;
  gid: number;
  blocks?: number;
  blksize?: number;
}

/** The subset of node-fuse-bindings' operations FreeLoader implements (its README). */
export interface FuseOperations {
  options?: string[];
  init?(cb: FuseCallback): void;
  error?(cb: FuseCallback): void;
  destroy?(cb: FuseCallback): void;
  access?(path: string, mode: number, cb: FuseCallback): void;
  statfs?(path: string, cb: FuseCallback<Record<string, number>>): void;
  getattr?(path: string, cb: FuseCallback<FuseStat>): void;
  readdir?(path: string, cb: FuseCallback<string[]>): void;
  open?(path: string, flags: number, cb: FuseCallback<number>): void;
  opendir?(path: string, flags: number, cb: FuseCallback<number>): void;
  read?(
    path: string,
    fd: number,
    buf: Buffer,
    len: number,
    pos: number,
    cb: (bytesOrError: number) => void,
  ): void;
  release?(path: string, fd: number, cb: FuseCallback): void;
  releasedir?(path: string, fd: number, cb: FuseCallback): void;
  [refused: string]: unknown;
}

export interface FuseBinding {
  mount(dir: string, ops: FuseOperations, cb: (err: Error | null) => void): void;
  [errno: string]: unknown;
}

/** What to run so `freeloader mount` works (Debian/Ubuntu names; the checkout's build script). */
export const FUSE_INSTALL_HINT =
  'install libfuse 2 and build the addon:\n' +
  '  sudo apt-get install -y fuse libfuse-dev pkg-config g++ make python3\n' +
  '  node apps/agent/scripts/build-fuse.mjs   # in the FreeLoader checkout (npm ci runs it too)';

let loaded: FuseBinding | undefined;
let loadError: string | undefined;

/**
 * node-fuse-bindings, loaded lazily: it is an optional dependency with a native addon, so a
 * machine without libfuse still runs every other command. Undefined (see {@link fuseLoadError})
 * when it is not installed, not built, or /dev/fuse is missing.
 */
export function loadFuse(): FuseBinding | undefined {
  if (loaded || loadError) return loaded;
  if (!existsSync('/dev/fuse')) {
    loadError = '/dev/fuse is missing (no FUSE kernel module here, or a container without it)';
    return undefined;
  }
  try {
    loaded = createRequire(import.meta.url)('node-fuse-bindings') as FuseBinding;
  } catch (e) {
    const msg = e instanceof Error ? e.message.split('\n')[0]! : String(e);
    loadError = /Cannot find module 'node-fuse-bindings'/.test(msg)
      ? 'the optional dependency node-fuse-bindings is not installed'
      : /No native build was found/.test(msg)
        ? 'node-fuse-bindings is installed but its addon is not built (libfuse 2 was missing at install)'
        : `node-fuse-bindings did not load (${msg})`;
  }
  return loaded;
}

export function fuseLoadError(): string | undefined {
  loadFuse();
  return loadError;
}

/** The binding's (negative) error number for an errno name, EIO for unknown names. */
export function fuseErrno(fuse: FuseBinding, name: string): number {
  const n = fuse[name];
  return typeof n === 'number' ? n : (fuse.EIO as number);
}
