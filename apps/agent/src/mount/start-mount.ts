import { FreeLoaderError, MiB, type Listing } from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';
import type { MountAdapter, Mounted } from './adapter.js';
import { createDatasetFs } from '../dataset-fs/create-dataset-fs.js';
import type { DatasetFs } from '../dataset-fs/dataset-fs.js';
import { prepareMountPoint } from './mount-point.js';
import { mountAdapterFor } from './platforms.js';

export interface StartMountOptions {
  manager: ManagerClient;
  dir: string;
  allowOther?: boolean;
  /** Memory for morsels (MiB). Default 256. */
  cacheMb?: number;
  /** Most MiB prefetched ahead of one sequential reader (default: 8 × stripe width morsels, ≥ 16). */
  readAheadMb?: number;
  /** Longest wait of any file operation before the application gets EIO (ms). Default 30 s. */
  opTimeoutMs?: number;
  /** Raise the kernel's read-ahead for the mount (KiB; root only). Default: the kernel's. */
  kernelReadAheadKb?: number;
  /** Fetch on a worker thread (default, when built) or on the thread answering the kernel. */
  worker?: boolean;
  adapter?: MountAdapter;
  log?: (message: string) => void;
}

export interface RunningMount {
  mounted: Mounted;
  fs: DatasetFs;
  /** The absolute mount point. */
  dir: string;
  /** A stale mount (left by a crash) was cleared before mounting. */
  clearedStale: boolean;
  /** Unmount (lazily if files are open, serving them up to `drainMs`) and release everything. */
  stop(drainMs?: number): Promise<void>;
}

/**
 * Mount the manager's namespace read-only at `dir`: checks the platform can mount (and says
 * what to install when not), that the manager answers with these credentials, clears a stale
 * mount point, then serves until {@link RunningMount.stop} or an unmount from outside
 * ({@link Mounted.ended}).
 *
 * @example
 *   const m = await startMount({ manager, dir: '/mnt/freeloader' });
 *   await m.mounted.ended; await m.stop();
 */
export async function startMount(opts: StartMountOptions): Promise<RunningMount> {
  const adapter = opts.adapter ?? mountAdapterFor();
  const why = adapter.unavailable();
  if (why) throw new FreeLoaderError('UNAVAILABLE', why);
  // Fail now, not at the first `ls`, when the manager is down or the session is not valid.
  await opts.manager.request<Listing>('GET', '/namespace?path=');
  const { dir, cleared } = await prepareMountPoint(opts.dir);
  const fs = createDatasetFs({
    manager: opts.manager,
    cacheBytes: (opts.cacheMb ?? 256) * MiB,
    ...(opts.readAheadMb !== undefined ? { readAheadBytes: opts.readAheadMb * MiB } : {}),
    ...(opts.log ? { log: opts.log } : {}),
    ...(opts.worker !== undefined ? { worker: opts.worker } : {}),
  });
  let mounted: Mounted;
  try {
    // Say "mounted" only once the first read is served at full speed.
    await fs.ready();
    mounted = await adapter.mount(dir, fs, {
      opTimeoutMs: opts.opTimeoutMs ?? 30_000,
      ...(opts.kernelReadAheadKb !== undefined
        ? { kernelReadAheadKb: opts.kernelReadAheadKb }
        : {}),
      ...(opts.allowOther ? { allowOther: true } : {}),
      ...(opts.log ? { log: opts.log } : {}),
    });
  } catch (e) {
    await fs.close();
    throw e;
  }
  let stopping: Promise<void> | undefined;
  return {
    mounted,
    fs,
    dir,
    clearedStale: cleared,
    stop(drainMs = 10_000) {
      stopping ??= (async () => {
        await Promise.race([mounted.ended, mounted.unmount({ drainMs })]).catch((e: unknown) =>
          opts.log?.(`unmounting ${dir}: ${e instanceof Error ? e.message : String(e)}`),
        );
        const st = fs.stats;
        opts.log?.(
          `served ${(st.bytes / 1e6).toFixed(1)} MB in ${st.fromMemory + st.waited} reads: ` +
            `${st.fromMemory} from memory, ${st.waited} waited ${(st.waitedMs / 1000).toFixed(2)} s for morsels`,
        );
        await fs.close();
      })();
      return stopping;
    },
  };
}
