import { FreeLoaderError } from '@freeloader/protocol';
import type { MountAdapter, MountOptions, Mounted } from './adapter.js';
import { errnoOf, withDeadline, type ReadOnlyFileSystem } from '../dataset-fs/file-system.js';
import {
  FUSE_INSTALL_HINT,
  fuseErrno,
  fuseLoadError,
  loadFuse,
  type FuseBinding,
  type FuseOperations,
  type FuseStat,
} from './fuse-binding.js';
import { raiseKernelReadAhead } from './kernel-read-ahead.js';
import { unmountDir } from './mount-point.js';
import { waitUntilAnswering } from './wait-answering.js';

/** How long a fresh mount may take to answer its first readdir (milliseconds). */
const ANSWER_TIMEOUT_MS = 30_000;

/**
 * Mount options: read-only (the kernel answers writes with EROFS itself, so `big_writes` has
 * nothing to do), permission checks in the kernel, reads as large as the kernel will send
 * (libfuse 2 cannot negotiate more than 128 KiB per request, whatever `max_read` says), and a
 * type `mount` shows as fuse.freeloader. `auto_cache` keeps the page cache across opens while
 * size and mtime stay the same: a ready dataset never changes, so re-reads come from the page
 * cache at memory speed, yet a path removed and imported again with new content
 * is read afresh (its mtime is the source's Last-Modified, else the import time) —
 * `kernel_cache` would keep serving the old bytes for it.
 */
export const FUSE_OPTIONS = [
  'ro',
  'default_permissions',
  'fsname=freeloader',
  'subtype=freeloader',
  'max_read=1048576',
  'auto_cache',
];

/** Operations that would change something: all refused on a read-only mount. */
const REFUSED = [
  'write',
  'create',
  'mknod',
  'mkdir',
  'unlink',
  'rmdir',
  'rename',
  'link',
  'symlink',
  'truncate',
  'ftruncate',
  'chmod',
  'chown',
  'utimens',
  'setxattr',
  'removexattr',
] as const;

/** Linux (and, untested, macOS with macFUSE) through libfuse 2 and node-fuse-bindings. */
export class FuseAdapter implements MountAdapter {
  readonly name = 'fuse (libfuse 2 via node-fuse-bindings)';

  unavailable(): string | undefined {
    const why = fuseLoadError();
    return why ? `FUSE is not available: ${why}.\nTo mount, ${FUSE_INSTALL_HINT}` : undefined;
  }

  async mount(dir: string, fs: ReadOnlyFileSystem, opts: MountOptions): Promise<Mounted> {
    const fuse = loadFuse();
    if (!fuse) throw new FreeLoaderError('UNAVAILABLE', this.unavailable()!);
    let markEnded!: () => void;
    const ended = new Promise<void>((r) => (markEnded = r));
    const ops = operations(fuse, fs, opts, markEnded);
    ops.options = [...FUSE_OPTIONS, ...(opts.allowOther ? ['allow_other'] : [])];
    await withDeadline(
      new Promise<void>((resolve, reject) =>
        fuse.mount(dir, ops, (err) =>
          err
            ? reject(
                new FreeLoaderError(
                  'INTERNAL',
                  `mounting ${dir} failed (${err.message}); libfuse's reason is printed above`,
                ),
              )
            : resolve(),
        ),
      ),
      15_000,
      `mounting ${dir}`,
    );
    // libfuse reports the mount before the kernel routes requests to it (seconds under load):
    // "mounted" must mean a script's next `ls` works.
    await waitUntilAnswering(dir, ANSWER_TIMEOUT_MS);
    if (opts.kernelReadAheadKb !== undefined) {
      const ra = await raiseKernelReadAhead(dir, opts.kernelReadAheadKb);
      opts.log?.(
        ra.changed
          ? `kernel read-ahead ${ra.fromKb} -> ${ra.toKb} KiB`
          : `kernel read-ahead kept${ra.kb === undefined ? '' : ` at ${ra.kb} KiB`} (${ra.why})`,
      );
    }
    return {
      dir,
      ended,
      async unmount({ drainMs = 10_000 } = {}) {
        let how: 'now' | 'lazy';
        try {
          how = await unmountDir(dir);
        } catch (e) {
          if (!(e instanceof FreeLoaderError && e.code === 'CONFLICT')) throw e;
          how = await unmountDir(dir, { lazy: true });
          opts.log?.(`files still open under ${dir}: detached; serving them up to ${drainMs} ms`);
        }
        const wait = how === 'now' ? 5_000 : drainMs;
        await Promise.race([ended, new Promise((r) => setTimeout(r, wait).unref())]);
      },
    };
  }
}

/** node-fuse-bindings operations over `fs`: once-only callbacks, deadlines, errno mapping. */
function operations(
  fuse: FuseBinding,
  fs: ReadOnlyFileSystem,
  opts: MountOptions,
  onDestroy: () => void,
): FuseOperations {
  const EROFS = fuseErrno(fuse, 'EROFS');
  const fail = (what: string, e: unknown): number => {
    const errno = errnoOf(e);
    if (errno === 'EIO') opts.log?.(`${what}: ${e instanceof Error ? e.message : String(e)}`);
    return fuseErrno(fuse, errno);
  };
  /** Run `work` under the deadline and answer the kernel exactly once. */
  const answer = <T>(
    what: string,
    work: (signal: AbortSignal) => Promise<T>,
    ok: (value: T) => void,
    err: (code: number) => void,
  ): void => {
    const ac = new AbortController();
    let done = false;
    withDeadline(work(ac.signal), opts.opTimeoutMs, what, () => ac.abort()).then(
      (v) => {
        if (done) return;
        done = true;
        ok(v);
      },
      (e: unknown) => {
        if (done) return;
        done = true;
        err(fail(what, e));
      },
    );
  };
  const ops: FuseOperations = {
    init: (cb) => cb(0),
    destroy: (cb) => {
      onDestroy();
      cb(0);
    },
    getattr: (path, cb) =>
      answer(
        `stat ${path}`,
        () => fs.getattr(path),
        (st) => cb(0, toFuseStat(st)),
        (code) => cb(code),
      ),
    access: (path, mode, cb) => {
      if (mode & 2) return cb(EROFS);
      answer(
        `access ${path}`,
        () => fs.getattr(path),
        () => cb(0),
        (code) => cb(code),
      );
    },
    readdir: (path, cb) =>
      answer(
        `readdir ${path}`,
        () => fs.readdir(path),
        (names) => cb(0, names),
        (code) => cb(code),
      ),
    open: (path, flags, cb) =>
      answer(
        `open ${path}`,
        () => fs.open(path, flags),
        (fd) => cb(0, fd),
        (code) => cb(code),
      ),
    read: (path, fd, buf, _len, pos, cb) => {
      const now = fs.readCached?.(fd, buf, pos);
      if (now !== undefined) return cb(now);
      answer(`read ${path} at ${pos}`, (signal) => fs.read(fd, buf, pos, signal), cb, cb);
    },
    release: (path, fd, cb) =>
      answer(
        `close ${path}`,
        () => fs.release(fd),
        () => cb(0),
        (code) => cb(code),
      ),
    statfs: (_path, cb) =>
      answer(
        'statfs',
        () => fs.statfs(),
        (s) =>
          cb(0, {
            bsize: s.blockSize,
            frsize: s.blockSize,
            blocks: s.blocks,
            bfree: s.blocksFree,
            bavail: s.blocksFree,
            files: s.files,
            ffree: 0,
            favail: 0,
            fsid: 0,
            flag: 1, // ST_RDONLY
            namemax: s.nameMax,
          }),
        (code) => cb(code),
      ),
  };
  for (const name of REFUSED) {
    ops[name] = (...args: unknown[]) => (args[args.length - 1] as (code: number) => void)(EROFS);
  }
  return ops;
}

function toFuseStat(st: Awaited<ReturnType<ReadOnlyFileSystem['getattr']>>): FuseStat {
  const dir = st.kind === 'dir';
  return {
    mode: (dir ? 0o040000 : 0o100000) | st.perm,
    nlink: dir ? 2 : 1,
    size: st.size,
    blocks: Math.ceil(st.size / 512),
    blksize: 1 << 20,
    mtime: st.mtime,
    atime: st.atime,
    ctime: st.ctime,
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
  };
}
