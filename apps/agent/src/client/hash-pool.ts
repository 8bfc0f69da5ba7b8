import { createHash } from 'node:crypto';
import { morselNonce } from '@freeloader/protocol';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { nativeAddonPath } from '../native/addon.js';
import { morselCipherKind, openInPlace } from '../native/morsel-cipher.js';

/** Memory the hash workers read: a client's `MorselSlab`, or one buffer of the mount's cache. */
export interface SharedMemory {
  readonly memory: SharedArrayBuffer;
}

/**
 * Bytes deciphered per step when a worker opens a morsel in place through node:crypto (no addon:
 * see `native/morsel-cipher.ts`): node:crypto has no in-place API, so each step's output is
 * copied back over its input. A whole 1 MiB morsel made a fresh 1 MiB output per morsel, memory
 * the allocator hands back and takes again; a 64 KiB step's output stays in cache. Opening 1 MiB
 * morsels on a worker (Intel VM, four alternating runs of 3 GiB each): 0.67–0.98, median 0.92
 * CPU-s/GiB whole, against 0.66–0.87, median 0.79, in steps.
 */
export const OPEN_CHUNK_BYTES = 64 * 1024;

/**
 * How long a read's first morsels wait for a booting worker before they are verified on the
 * read's own thread instead. Verifying there competes with the sockets for that thread: on the
 * AMD VM of issue 19 (2 cores, 4 local donors) the first morsel of a 256 MiB encrypted read came
 * after 0.36–0.46 s when the morsels that arrived before the worker booted (~0.07 s alone, longer
 * beside the read) were opened inline, 0.09–0.14 s when they waited for it; the read's CPU per
 * GiB fell from a median 3.85 to 3.4 (6 pairs). The bound only matters when a worker cannot boot.
 */
export const WORKER_BOOT_WAIT_MS = 2_000;

/**
 * The worker's whole program. Inline rather than a file next to this module, so it runs the
 * same from `dist/`, from sources under a test runner, or from a bundled desktop app.
 * Messages: `{kind:'slab', slab, memory}` registers shared memory, `{kind:'forget', slab}` drops
 * it; `{kind:'hash', id, slab, offset, length}` answers `{id, digest}`; `{kind:'open', id, slab,
 * offset, length, key, nonce, aad (the dataset id, a string), tag}` decrypts an AES-256-GCM
 * morsel in place (see @freeloader/protocol's morsel-seal.ts, which computes the nonce) and
 * answers `{id, digest: 'opened'}` when its tag checks, or `{id, digest: 'tag mismatch'}`: then
 * the bytes are neither the ciphertext nor trustworthy plain text, and the caller fetches the
 * morsel again (it never uses a morsel whose check failed). `ADDON` is the data-path addon's
 * path (null without it): it opens the bytes where they lie, with no output to copy back.
 */
function workerSource(addonPath: string | undefined): string {
  return `
const { createHash, createDecipheriv } = require('node:crypto');
const { parentPort } = require('node:worker_threads');
const slabs = new Map();
const OPEN_CHUNK = ${OPEN_CHUNK_BYTES};
const ADDON = ${JSON.stringify(addonPath ?? null)};
let addon = null;
try { if (ADDON) addon = require(ADDON); } catch { addon = null; }
function open(m, bytes) {
  const aad = Buffer.from(m.aad, 'utf8');
  if (addon) return addon.open(m.key, m.nonce, aad, bytes, m.tag);
  const d = createDecipheriv('aes-256-gcm', m.key, m.nonce, { authTagLength: 16 });
  d.setAAD(aad);
  d.setAuthTag(m.tag);
  for (let at = 0; at < m.length; at += OPEN_CHUNK) {
    const piece = bytes.subarray(at, Math.min(at + OPEN_CHUNK, m.length));
    piece.set(d.update(piece));
  }
  try { d.final(); return true; } catch { return false; }
}
parentPort.on('message', (m) => {
  if (m.kind === 'slab') { slabs.set(m.slab, m.memory); return; }
  if (m.kind === 'forget') { slabs.delete(m.slab); return; }
  const memory = slabs.get(m.slab);
  if (!memory) { parentPort.postMessage({ id: m.id, error: 'unknown slab ' + m.slab }); return; }
  if (m.kind === 'open') {
    const opened = open(m, new Uint8Array(memory, m.offset, m.length));
    parentPort.postMessage({ id: m.id, digest: opened ? 'opened' : 'tag mismatch' });
    return;
  }
  const digest = createHash('sha256').update(new Uint8Array(memory, m.offset, m.length)).digest('hex');
  parentPort.postMessage({ id: m.id, digest });
});
`;
}

/** What opens one sealed morsel: the dataset's key, its id (the AAD), the index and the tag. */
export interface Seal {
  key: Buffer;
  datasetId: string;
  index: number;
  tag: Buffer;
}

interface Pending {
  resolve: (digest: string) => void;
  reject: (e: Error) => void;
  worker: Worker;
}

/**
 * SHA-256 of morsels on other cores: verifying 1 GB/s costs most of a core, which the thread
 * that drives the network cannot spare. Workers read slab memory directly (no copies). With no
 * spare core (`threads: 0`), when no worker booted within {@link WORKER_BOOT_WAIT_MS}, or when
 * a worker dies, hashing happens inline — never a hang.
 */
export class HashPool {
  private workers: Worker[] = [];
  /** Workers that have booted; until one has, morsels wait for it (see {@link booted}). */
  private ready: Worker[] = [];
  /** Settles when the first worker is online, or none is left to boot. */
  private firstBoot: Promise<void> | undefined;
  private settleBoot: (() => void) | undefined;
  private readonly addonPath = nativeAddonPath();
  private readonly pending = new Map<number, Pending>();
  private readonly slabIds = new Map<SharedMemory, number>();
  /** Dataset keys copied out of whatever pool they were cut from (see `ownedKey`). */
  private readonly keys = new WeakMap<Buffer, Uint8Array>();
  private nextSlabId = 1;
  private nextId = 0;
  private turn = 0;

  constructor(threads = Math.min(2, Math.max(0, availableParallelism() - 1))) {
    if (threads > 0) {
      this.firstBoot = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, WORKER_BOOT_WAIT_MS);
        timer.unref();
        this.settleBoot = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    for (let i = 0; i < threads; i++) this.spawn();
  }

  /** Which cipher opens morsels on the workers (and inline): the addon, or node:crypto. */
  get cipher(): 'native' | 'node:crypto' {
    return morselCipherKind();
  }

  /**
   * Resolves once a worker is ready to take a morsel, or it is no use waiting (none left to
   * boot, or {@link WORKER_BOOT_WAIT_MS} passed): the caller then verifies inline.
   */
  private async booted(): Promise<void> {
    if (this.ready.length === 0 && this.firstBoot) await this.firstBoot;
  }

  /** Hash `length` bytes of a slab at `offset`. */
  async hashSlot(slab: SharedMemory, offset: number, length: number): Promise<string> {
    await this.booted();
    if (this.ready.length === 0) return sha256(Buffer.from(slab.memory, offset, length));
    return this.post(slab, { kind: 'hash', offset, length });
  }

  /**
   * Open a sealed morsel in place: `length` bytes of a slab at `offset` become its plain text
   * once its AES-GCM tag checks (on a worker, like the hash: the read loop's core keeps driving
   * the network). False when the tag does not match: the bytes are then unusable (a worker has
   * deciphered them step by step before the tag could fail) and the caller fetches the morsel again.
   */
  async openSlot(slab: SharedMemory, offset: number, length: number, seal: Seal): Promise<boolean> {
    await this.booted();
    if (this.ready.length === 0) {
      const bytes = new Uint8Array(slab.memory, offset, length);
      return openInPlace(seal.key, seal.datasetId, seal.index, bytes, seal.tag);
    }
    // Every byte array here owns its memory: a Buffer cut from Node's 8 KiB pool (the tag from
    // hex, a short string's bytes) would be cloned with its whole pool, 8 KiB each; with them
    // a message cost 34–47 µs of CPU instead of 8–9 µs (a 20,000-message loop on this VM).
    const message = {
      kind: 'open',
      offset,
      length,
      key: this.ownedKey(seal.key),
      nonce: morselNonce(seal.index),
      aad: seal.datasetId,
      tag: ownBytes(seal.tag),
    };
    return (await this.post(slab, message)) === 'opened';
  }

  /** `key` in memory of its own, made once per key (a reader opens every morsel with one). */
  private ownedKey(key: Buffer): Uint8Array {
    let owned = this.keys.get(key);
    if (!owned) this.keys.set(key, (owned = ownBytes(key)));
    return owned;
  }

  /** Send `message` about `slab` to the next ready worker; its answer's `digest`. */
  private post(slab: SharedMemory, message: Record<string, unknown>): Promise<string> {
    let slabId = this.slabIds.get(slab);
    if (slabId === undefined) {
      slabId = this.nextSlabId++;
      this.slabIds.set(slab, slabId);
      for (const w of this.workers)
        w.postMessage({ kind: 'slab', slab: slabId, memory: slab.memory });
    }
    const id = this.nextId++;
    const worker = this.ready[this.turn++ % this.ready.length]!;
    return new Promise((resolve, reject) => {
      // Referenced while hashes are outstanding (a verification may be all that keeps the
      // process busy), unreferenced when idle so an idle pool never holds a CLI open.
      if (this.pending.size === 0) this.setRef(true);
      this.pending.set(id, { resolve, reject, worker });
      worker.postMessage({ ...message, id, slab: slabId });
    });
  }

  /**
   * Stop sharing `slab` with the workers, so its memory can be freed (the mount's cache drops
   * buffers it no longer needs). A hash of it still outstanding finishes first: messages to a
   * worker are handled in order.
   */
  forget(slab: SharedMemory): void {
    const slabId = this.slabIds.get(slab);
    if (slabId === undefined) return;
    this.slabIds.delete(slab);
    for (const w of this.workers) w.postMessage({ kind: 'forget', slab: slabId });
  }

  async close(): Promise<void> {
    const workers = this.workers;
    this.workers = [];
    this.ready = [];
    this.settleBoot?.();
    await Promise.all(workers.map((w) => w.terminate()));
    for (const p of this.pending.values()) p.reject(new Error('hash pool closed'));
    this.pending.clear();
  }

  private spawn(): void {
    const w = new Worker(workerSource(this.addonPath), { eval: true });
    w.on('message', (m: { id: number; digest?: string; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.setRef(false);
      if (m.digest) p.resolve(m.digest);
      else p.reject(new Error(m.error ?? 'hash worker failed'));
    });
    w.once('online', () => {
      if (!this.workers.includes(w)) return;
      this.ready.push(w);
      this.settleBoot?.();
    });
    const lost = (): void => this.lose(w);
    w.on('error', lost);
    w.on('exit', lost);
    w.unref();
    this.workers.push(w);
  }

  /** A worker died: its outstanding hashes are redone inline; later ones go elsewhere. */
  private lose(w: Worker): void {
    if (!this.workers.includes(w)) return;
    this.workers = this.workers.filter((x) => x !== w);
    this.ready = this.ready.filter((x) => x !== w);
    if (this.workers.length === 0) this.settleBoot?.();
    for (const [id, p] of this.pending) {
      if (p.worker !== w) continue;
      this.pending.delete(id);
      p.reject(new Error('hash worker died'));
    }
  }

  private setRef(on: boolean): void {
    for (const w of this.workers) {
      if (on) w.ref();
      else w.unref();
    }
  }
}

/**
 * A copy of `bytes` over an ArrayBuffer of exactly its length, so postMessage clones only them.
 *
 * @example ownBytes(Buffer.from('ab', 'hex')).buffer.byteLength // 1 (the Buffer's was 8192)
 */
function ownBytes(bytes: Uint8Array): Uint8Array {
  return bytes.buffer.byteLength === bytes.length ? bytes : Uint8Array.from(bytes);
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
