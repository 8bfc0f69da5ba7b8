import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ManagerClient } from '../manager-client.js';
import { FsError } from './file-system.js';
import type { MorselBuffer } from './morsel-cache.js';
import type { DatasetInfo, MorselSource } from './morsel-source.js';
import { fromWire, toWire, type FromWorker, type ToWorker } from './worker-protocol.js';

// By way of the parent folder, so the path holds from dist/dataset-fs/ and from the bundled CLI
// in dist/cli/ (scripts/build-cli-bundle.mjs) alike; the worker itself runs unbundled.
const WORKER_FILE = new URL('../dataset-fs/morsel-worker.js', import.meta.url);

interface Pending {
  resolve: (m: Extract<FromWorker, { t: 'reply' }>) => void;
  reject: (e: Error) => void;
}

/**
 * Morsels fetched and verified on a worker thread. The main thread answers the kernel one
 * request at a time; with HTTP parsing and its garbage on another thread, a request for bytes
 * already in memory is never held up behind network work. The worker writes each morsel into
 * the cache's shared buffer (nothing is copied or transferred between threads). It starts with
 * the source, so its start-up is over before the first read; one that dies fails its outstanding
 * reads (EIO) and is replaced on the next.
 */
export class WorkerMorselSource implements MorselSource {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextQ = 0;
  private closed = false;
  /** Cache buffers the current worker has been given. */
  private readonly shared = new Set<number>();
  private started!: Promise<void>;
  private markStarted!: () => void;

  constructor(
    private readonly manager: ManagerClient,
    private readonly opts: { perDonorInFlight?: number; log?: (message: string) => void } = {},
  ) {
    this.spawned();
  }

  /** Whether the worker's compiled file is there (not when running from TypeScript sources). */
  static available(): boolean {
    return existsSync(fileURLToPath(WORKER_FILE));
  }

  async open(id: string): Promise<DatasetInfo> {
    const r = await this.call({ t: 'open', q: this.nextQ++, id });
    return r.info!;
  }

  async read(id: string, index: number, into: MorselBuffer): Promise<number> {
    // Memory the worker does not know (it restarted since) is shared first; a buffer without
    // memory is allocated by the worker and comes back with the reply.
    if (into.memory && !this.closed && !this.shared.has(into.id)) {
      const memory = into.memory;
      this.spawned().postMessage({ t: 'buffer', buffer: into.id, memory } satisfies ToWorker);
      this.shared.add(into.id);
    }
    const size = into.size;
    const r = await this.call({ t: 'read', q: this.nextQ++, id, index, buffer: into.id, size });
    if (r.memory) {
      into.attach(r.memory);
      this.shared.add(into.id);
    }
    return r.length!;
  }

  /**
   * Resolves once the worker has loaded (so the first read after mounting does not wait for a
   * thread to start and compile the client library), or after `timeoutMs` whatever happened.
   */
  ready(timeoutMs = 15_000): Promise<void> {
    return Promise.race([this.started, new Promise<void>((r) => setTimeout(r, timeoutMs).unref())]);
  }

  forget(buffer: MorselBuffer): void {
    if (!this.shared.delete(buffer.id)) return;
    this.worker?.postMessage({ t: 'forget', buffer: buffer.id } satisfies ToWorker);
  }

  release(id: string): void {
    this.worker?.postMessage({ t: 'release', id } satisfies ToWorker);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const w = this.worker;
    if (!w) return;
    const q = this.nextQ++;
    const done = new Promise<void>((resolve) => {
      this.pending.set(q, { resolve: () => resolve(), reject: () => resolve() });
    });
    w.postMessage({ t: 'close', q } satisfies ToWorker);
    await Promise.race([done, new Promise((r) => setTimeout(r, 5_000).unref())]);
    await w.terminate();
  }

  private call(m: Extract<ToWorker, { q: number }>): Promise<Extract<FromWorker, { t: 'reply' }>> {
    if (this.closed) return Promise.reject(new FsError('EIO', 'the mount is closing'));
    const w = this.spawned();
    return new Promise((resolve, reject) => {
      this.pending.set(m.q, {
        resolve: (r) => (r.error ? reject(fromWire(r.error)) : resolve(r)),
        reject,
      });
      w.postMessage(m);
    });
  }

  private spawned(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER_FILE, {
      workerData: { perDonorInFlight: this.opts.perDonorInFlight },
    });
    this.started = new Promise<void>((r) => (this.markStarted = r));
    w.on('message', (m: FromWorker) => this.onMessage(w, m));
    const lost = (why: unknown): void => {
      if (this.worker !== w) return;
      this.worker = undefined;
      this.shared.clear();
      this.markStarted(); // nothing to wait for any more
      if (!this.closed) this.opts.log?.(`morsel worker stopped (${String(why)}); restarting`);
      for (const p of this.pending.values()) p.reject(new FsError('EIO', 'morsel worker stopped'));
      this.pending.clear();
    };
    w.on('error', lost);
    w.on('exit', lost);
    this.worker = w;
    return w;
  }

  private onMessage(w: Worker, m: FromWorker): void {
    switch (m.t) {
      case 'reply': {
        const p = this.pending.get(m.q);
        this.pending.delete(m.q);
        p?.resolve(m);
        return;
      }
      case 'log':
        this.opts.log?.(m.message);
        return;
      case 'ready':
        if (this.worker === w) this.markStarted();
        return;
      case 'manager':
        this.manager.request(m.method, m.path, m.body).then(
          (result) => w.postMessage({ t: 'manager-reply', q: m.q, result } satisfies ToWorker),
          (e: unknown) =>
            w.postMessage({ t: 'manager-reply', q: m.q, error: toWire(e) } satisfies ToWorker),
        );
        return;
    }
  }
}
