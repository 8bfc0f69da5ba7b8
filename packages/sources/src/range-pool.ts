import type { LookupFunction } from 'node:net';
import { RangeConnection, type RangeTimeouts } from './range-connection.js';

/**
 * Up to `max` keep-alive {@link RangeConnection}s to one origin; callers beyond that wait for a
 * free one (first come, first served). Closing refuses new callers and drops every connection.
 *
 * @example
 *   const pool = new RangePool('127.0.0.1', 8080, 4, timeouts);
 *   const c = await pool.acquire();
 *   try { await c.get(head, buf); } finally { pool.release(c); }
 */
export class RangePool {
  private readonly idle: RangeConnection[] = [];
  private readonly all = new Set<RangeConnection>();
  private readonly waiters: Array<{
    resolve: (c: RangeConnection) => void;
    reject: (e: unknown) => void;
  }> = [];
  private closed = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly max: number,
    private readonly timeouts: RangeTimeouts,
    private readonly closedError: () => Error,
    /** DNS for new connections (the source policy's checking lookup). */
    private readonly lookup?: LookupFunction,
  ) {}

  /** A connection of one's own until {@link release}; waits while `max` are busy. */
  acquire(signal?: AbortSignal): Promise<RangeConnection> {
    if (this.closed) return Promise.reject(this.closedError());
    const ready = this.idle.pop();
    if (ready) return Promise.resolve(ready);
    if (this.all.size < this.max) return Promise.resolve(this.fresh());
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      this.waiters.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
        },
        { once: true },
      );
    });
  }

  /** A new connection replacing `old` (e.g. after a stale keep-alive), still counted once. */
  replace(old: RangeConnection): RangeConnection {
    this.all.delete(old);
    old.destroy();
    return this.fresh();
  }

  /** Hand a connection back; a destroyed one frees its place for a new one. */
  release(c: RangeConnection): void {
    if (c.closed || this.closed) {
      this.all.delete(c);
      c.destroy();
      if (this.closed) return;
      const w = this.waiters.shift();
      if (w) w.resolve(this.fresh());
      return;
    }
    const w = this.waiters.shift();
    if (w) w.resolve(c);
    else this.idle.push(c);
  }

  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(this.closedError());
    for (const c of this.all) c.destroy();
    this.all.clear();
    this.idle.length = 0;
  }

  private fresh(): RangeConnection {
    const c = new RangeConnection(this.host, this.port, this.timeouts, this.lookup);
    this.all.add(c);
    return c;
  }
}
