import { FreeLoaderError } from '@freeloader/protocol';

/** A patched morsel held in memory with the SHA-256 its downloader computed. */
export interface PatchedMorsel {
  data: Buffer;
  sha256: string;
}

interface Waiter {
  resolve: (m: PatchedMorsel) => void;
  reject: (e: FreeLoaderError) => void;
}

/**
 * The morsels a patching node holds for one session, in memory only (seed 002 §3.3: patched
 * data is streamed, never stored). A reader may ask before a morsel arrives and is woken when it
 * does; a morsel handed over is dropped and its bytes freed; a failure wakes every reader with
 * the error.
 *
 * @example
 *   buf.put(7, { data, sha256 });
 *   const m = await buf.take(7, 30_000); // … send it …
 *   buf.release(7);
 */
export class PatchBuffer {
  private readonly held = new Map<number, PatchedMorsel>();
  private readonly waiters = new Map<number, Waiter[]>();
  private readonly served = new Set<number>();
  private failure: FreeLoaderError | undefined;
  /** Bytes held now. */
  bytes = 0;

  get failed(): FreeLoaderError | undefined {
    return this.failure;
  }

  /** Morsels handed over and dropped so far. */
  get servedCount(): number {
    return this.served.size;
  }

  /** Hold a morsel (a repeat or one already served is ignored). */
  put(index: number, morsel: PatchedMorsel): void {
    if (this.failure || this.served.has(index) || this.held.has(index)) return;
    this.held.set(index, morsel);
    this.bytes += morsel.data.length;
    const waiting = this.waiters.get(index);
    this.waiters.delete(index);
    for (const w of waiting ?? []) w.resolve(morsel);
  }

  /**
   * Morsel `index` once it is here (at most `timeoutMs`): MORSEL_GONE when it was already served,
   * the session's error when it failed, TIMEOUT when nothing came.
   */
  take(index: number, timeoutMs: number, signal?: AbortSignal): Promise<PatchedMorsel> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.served.has(index)) {
      return Promise.reject(
        new FreeLoaderError('MORSEL_GONE', `patched morsel ${index} was already served`),
      );
    }
    const now = this.held.get(index);
    if (now) return Promise.resolve(now);
    return new Promise<PatchedMorsel>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const list = this.waiters.get(index)?.filter((w) => w !== waiter) ?? [];
        if (list.length > 0) this.waiters.set(index, list);
        else this.waiters.delete(index);
      };
      const waiter: Waiter = {
        resolve: (m) => (done(), resolve(m)),
        reject: (e) => (done(), reject(e)),
      };
      const onAbort = () =>
        waiter.reject(new FreeLoaderError('UNAVAILABLE', 'the reader went away'));
      const timer = setTimeout(
        () =>
          waiter.reject(
            new FreeLoaderError('TIMEOUT', `patched morsel ${index} did not arrive in time`),
          ),
        timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.set(index, [...(this.waiters.get(index) ?? []), waiter]);
    });
  }

  /** The morsel was delivered: drop it and free its bytes. */
  release(index: number): void {
    const m = this.held.get(index);
    this.served.add(index);
    if (!m) return;
    this.held.delete(index);
    this.bytes -= m.data.length;
  }

  /** Fail every current and future reader with `error`, and drop what is held. */
  fail(error: FreeLoaderError): void {
    if (this.failure) return;
    this.failure = error;
    for (const list of this.waiters.values()) for (const w of list) w.reject(error);
    this.waiters.clear();
    this.clear();
  }

  /** Drop everything held (the session ended). */
  clear(): void {
    this.held.clear();
    this.bytes = 0;
  }
}
