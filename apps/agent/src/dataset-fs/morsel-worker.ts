import { parentPort, workerData } from 'node:worker_threads';
import type { ManagerClient } from '../manager-client.js';
import { InProcessMorselSource } from './morsel-source.js';
import { fromWire, toWire, type FromWorker, type ToWorker } from './worker-protocol.js';

// The mount's network thread: fetches and verifies morsels through the client library straight
// into the cache's shared buffers, so the main thread, which answers the kernel one request at a
// time, only copies bytes out. Manager calls (maps, rates) go back to the main thread, which
// holds the credentials.
const port = parentPort!;
const post = (m: FromWorker): void => port.postMessage(m);

let nextQ = 0;
const managerCalls = new Map<
  number,
  { resolve: (v: unknown) => void; reject: (e: Error) => void }
>();
const manager = {
  request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const q = nextQ++;
    return new Promise<T>((resolve, reject) => {
      managerCalls.set(q, { resolve: resolve as (v: unknown) => void, reject });
      post({ t: 'manager', q, method, path, ...(body === undefined ? {} : { body }) });
    });
  },
};

const source = new InProcessMorselSource({
  // Only `request` is ever called on it (fetchMap, suffix plans, rate reports).
  manager: manager as unknown as ManagerClient,
  perDonorInFlight:
    (workerData as { perDonorInFlight?: number } | undefined)?.perDonorInFlight ?? 4,
  log: (message) => post({ t: 'log', message }),
});
/** Opens per dataset, so a read after a restart of this worker can reopen what it needs. */
const held = new Map<string, number>();
/** The cache's buffers by id (one object each: the hash pool knows them by identity). */
const buffers = new Map<number, { memory: SharedArrayBuffer }>();

async function ensureOpen(id: string): Promise<void> {
  if (held.has(id)) return;
  await source.open(id);
  held.set(id, 1);
}

port.on('message', (m: ToWorker) => {
  switch (m.t) {
    case 'manager-reply': {
      const call = managerCalls.get(m.q);
      managerCalls.delete(m.q);
      if (m.error) call?.reject(fromWire(m.error));
      else call?.resolve(m.result);
      return;
    }
    case 'open':
      source.open(m.id).then(
        (info) => {
          held.set(m.id, (held.get(m.id) ?? 0) + 1);
          post({ t: 'reply', q: m.q, info });
        },
        (e: unknown) => post({ t: 'reply', q: m.q, error: toWire(e) }),
      );
      return;
    case 'buffer':
      buffers.set(m.buffer, { memory: m.memory });
      return;
    case 'forget': {
      const b = buffers.get(m.buffer);
      buffers.delete(m.buffer);
      if (b) source.forget(b);
      return;
    }
    case 'read': {
      // A new buffer is allocated here: zeroing and faulting in its pages is this thread's work,
      // not the kernel-facing main thread's.
      let into = buffers.get(m.buffer);
      const fresh = !into;
      if (!into) buffers.set(m.buffer, (into = { memory: new SharedArrayBuffer(m.size) }));
      const target = into;
      ensureOpen(m.id)
        .then(() => source.readInto(m.id, m.index, target))
        .then(
          (length) =>
            post({ t: 'reply', q: m.q, length, ...(fresh ? { memory: target.memory } : {}) }),
          (e: unknown) => {
            if (fresh) {
              buffers.delete(m.buffer);
              source.forget(target);
            }
            post({ t: 'reply', q: m.q, error: toWire(e) });
          },
        );
      return;
    }
    case 'release': {
      const n = (held.get(m.id) ?? 0) - 1;
      if (n > 0) held.set(m.id, n);
      else held.delete(m.id);
      if (n >= 0) source.release(m.id);
      return;
    }
    case 'close':
      void source.close().finally(() => post({ t: 'reply', q: m.q }));
      return;
  }
});

post({ t: 'ready' });
