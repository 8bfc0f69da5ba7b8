import { FreeLoaderError, isErrorCode } from '@freeloader/protocol';
import { FsError, type Errno } from './file-system.js';
import type { DatasetInfo } from './morsel-source.js';

/**
 * Main thread → morsel worker. `q` numbers a request; its answer carries the same `q`. `read`
 * writes a morsel into cache buffer `buffer`: one the worker knows (it allocated it, or was given
 * it with `buffer`), else a new one of `size` bytes it allocates and returns in the reply.
 */
export type ToWorker =
  | { t: 'open'; q: number; id: string }
  | { t: 'buffer'; buffer: number; memory: SharedArrayBuffer }
  | { t: 'forget'; buffer: number }
  | { t: 'read'; q: number; id: string; index: number; buffer: number; size: number }
  | { t: 'release'; id: string }
  | { t: 'close'; q: number }
  | { t: 'manager-reply'; q: number; result?: unknown; error?: WireError };

/** Morsel worker → main thread. */
export type FromWorker =
  | {
      t: 'reply';
      q: number;
      info?: DatasetInfo;
      length?: number;
      /** The memory of a buffer the worker allocated for this read. */
      memory?: SharedArrayBuffer;
      error?: WireError;
    }
  | { t: 'manager'; q: number; method: string; path: string; body?: unknown }
  | { t: 'log'; message: string }
  /** Loaded and listening: reads sent now are served at once. */
  | { t: 'ready' };

/** An error as it crosses threads (structured clone keeps no classes). */
export interface WireError {
  message: string;
  code?: string;
  errno?: Errno;
}

export function toWire(e: unknown): WireError {
  if (e instanceof FsError) return { message: e.message, errno: e.errno };
  if (e instanceof FreeLoaderError) return { message: e.message, code: e.code };
  return { message: e instanceof Error ? e.message : String(e) };
}

/** The error again, as the class the other thread threw. */
export function fromWire(w: WireError): Error {
  if (w.errno) return new FsError(w.errno, w.message);
  if (isErrorCode(w.code)) return new FreeLoaderError(w.code, w.message);
  return new Error(w.message);
}
