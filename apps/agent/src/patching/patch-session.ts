import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import {
  FreeLoaderError,
  dataKeyOf,
  isFreeLoaderError,
  type MorselHash,
  type PatchReport,
  type PatchSessionPlan,
} from '@freeloader/protocol';
import { patchSessionPath } from '@freeloader/protocol/wire';
import { openSource, type Source, type SourcePolicy } from '@freeloader/sources';
import type { AdmitTransfer } from '../governor/governance.js';
import type { ManagerClient } from '../manager-client.js';
import { Semaphore } from '../client/semaphore.js';
import { downloadRange, type RangeStats } from './download-range.js';
import { PatchBuffer, type PatchedMorsel } from './patch-buffer.js';
import type { PeerClient } from './peer-client.js';
import { ownedCount, ownerSlot, requestsOf } from './stripe.js';
import { sealInPlace } from '../native/morsel-cipher.js';

/** Shuffle pushes in flight per session: overlap one morsel's round trip with the next. */
const PUSHES_IN_FLIGHT = 4;
/** Hashes reported to the manager per request. */
const HASH_BATCH = 1024;

export interface PatchSessionDeps {
  me: string;
  manager: ManagerClient;
  peers: PeerClient;
  log: Logger;
  /** Bytes this node may hold for the session before its download pauses. */
  budgetBytes: number;
  allowFileUris?: boolean;
  /** Which addresses the source may be fetched from (checked on every connection). */
  sourcePolicy: SourcePolicy;
  /** The governor's admission for source downloads (paced with serving, held while paused). */
  admit?: AdmitTransfer;
  onClosed: (sessionId: string) => void;
}

/**
 * One node's part in a collective download (seed 002 §4.2). It downloads its share of the
 * suffix — requests r ≡ k (mod p) of `requestSize` bytes each, one contiguous Range request
 * apiece over one warm keep-alive source session — hashes every morsel as it lands, and
 * shuffles it to the node that serves it (morsel m to node (m − first) mod p), keeping its own.
 * Download, shuffle and serving the client run concurrently; the memory budget pauses the
 * download while it is too far ahead of the client.
 */
export class PatchSession {
  readonly buffer = new PatchBuffer();
  readonly slot: number;
  lastActivity = performance.now();
  private readonly source: Source;
  private readonly controller = new AbortController();
  private readonly pushes = new Semaphore(PUSHES_IN_FLIGHT);
  private readonly deadPeers = new Set<string>();
  private readonly stats: RangeStats = {
    requests: 0,
    firstByteMs: undefined,
    activeMs: 0,
    bytes: 0,
  };
  private hashes: MorselHash[] = [];
  /** Highest morsel the client asked this node for: how far the read has got. */
  private frontier: number;
  private frontierWaiters: Array<() => void> = [];
  /** How far past the client's frontier the download may run (morsels): the memory budget. */
  private readonly lookahead: number;
  /** Morsels being read on demand, outside the collective download. */
  private readonly fetching = new Set<number>();
  private downloaded = false;
  private closed = false;
  /** An encrypted dataset's key, to seal copies for the hashes it reports (never served). */
  private readonly key: Buffer | undefined;

  constructor(
    readonly plan: PatchSessionPlan,
    private readonly deps: PatchSessionDeps,
  ) {
    this.slot = plan.plan.nodes.findIndex((n) => n.id === deps.me);
    if (this.slot < 0) throw new FreeLoaderError('FORBIDDEN', 'this agent is not in the session');
    const { nodes, requestSize, firstMorsel } = plan.plan;
    this.frontier = firstMorsel;
    // Each node holds about 1/p of what is ahead of the client, so p budgets of lookahead;
    // never less than one round of requests, or the nodes could not all start at once.
    const perRequest = Math.max(1, Math.floor(requestSize / plan.morselSize));
    this.lookahead = Math.max(
      Math.floor((deps.budgetBytes * nodes.length) / plan.morselSize),
      perRequest * nodes.length,
    );
    this.key = plan.dataKey === undefined ? undefined : dataKeyOf(plan.dataKey);
    this.source = openSource(plan.source.uri, {
      connections: 2,
      allowFile: deps.allowFileUris ?? false,
      policy: deps.sourcePolicy,
    });
  }

  get id(): string {
    return this.plan.plan.sessionId;
  }

  private get path(): string {
    return patchSessionPath(this.plan.plan.datasetId, this.id);
  }

  /** Begin downloading this node's share (returns at once). */
  start(): void {
    void this.download().then(
      () => {
        this.downloaded = true;
        void this.flushHashes();
        this.closeIfDone();
      },
      (e: unknown) => {
        if (this.closed) return;
        const err = isFreeLoaderError(e) ? e : new FreeLoaderError('SOURCE_ERROR', String(e));
        this.deps.log.warn({ session: this.id, code: err.code, err: err.message }, 'patch failed');
        void this.failAll(err);
      },
    );
  }

  /** Morsel `index` for the client, waiting for it to arrive (up to `timeoutMs`). */
  async serve(index: number, timeoutMs: number, signal?: AbortSignal): Promise<PatchedMorsel> {
    this.lastActivity = performance.now();
    const { nodes, firstMorsel, endMorsel } = this.plan.plan;
    if (
      index < firstMorsel ||
      index >= endMorsel ||
      ownerSlot(index, firstMorsel, nodes.length) !== this.slot
    ) {
      throw new FreeLoaderError('BAD_REQUEST', `morsel ${index} is not served by this node`);
    }
    if (index >= this.frontier + this.lookahead) {
      // Random access far ahead (a mount reading the end first): fetch just this morsel, so the
      // collective download neither jumps ahead nor buffers everything in between.
      this.fetchOne(index);
    } else if (index > this.frontier) {
      this.frontier = index;
      const waiting = this.frontierWaiters;
      this.frontierWaiters = [];
      for (const w of waiting) w();
    }
    return this.buffer.take(index, timeoutMs, signal);
  }

  /** The client has morsel `index`: drop it; the session ends once all are delivered. */
  delivered(index: number): void {
    this.lastActivity = performance.now();
    this.buffer.release(index);
    this.closeIfDone();
  }

  /** The client is still reading (maybe its cached prefix): keep the session. */
  touch(): void {
    this.lastActivity = performance.now();
  }

  /** A peer shuffled a morsel here. */
  receive(index: number, morsel: PatchedMorsel): void {
    this.lastActivity = performance.now();
    this.buffer.put(index, morsel);
  }

  /** A peer's download failed for good (e.g. the source changed): so does this session. */
  peerFailed(error: FreeLoaderError): void {
    this.buffer.fail(error);
    void this.close(error);
  }

  private async download(): Promise<void> {
    const { plan, morselSize, source } = this.plan;
    const signal = this.controller.signal;
    for (const [from, to] of requestsOf(plan, morselSize, this.slot)) {
      // The memory budget, as a lookahead past the client's frontier. It never holds back the
      // request with the client's next morsel (that one starts at or before the frontier), so
      // nodes whose buffers fill with shuffled morsels cannot starve each other.
      while (from >= this.frontier + this.lookahead) {
        await new Promise<void>((resolve) => {
          this.frontierWaiters.push(resolve);
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        signal.throwIfAborted();
      }
      signal.throwIfAborted();
      if (this.buffer.failed) throw this.buffer.failed;
      await downloadRange(
        this.source,
        source,
        from,
        to,
        morselSize,
        (index, data) => this.dispatch(index, data),
        this.stats,
        signal,
      );
      this.lastActivity = performance.now();
    }
    // Let the last shuffles land before reporting the download done.
    for (let i = 0; i < PUSHES_IN_FLIGHT; i++) await this.pushes.acquire();
    for (let i = 0; i < PUSHES_IN_FLIGHT; i++) this.pushes.release();
  }

  private async dispatch(index: number, data: Buffer): Promise<void> {
    // Awaited by the download loop: holding here slows the source stream to the governor's pace.
    await this.deps.admit?.(data.length, 'in', this.controller.signal);
    this.lastActivity = performance.now();
    const sha256 = createHash('sha256').update(data).digest('hex');
    if (index >= this.plan.hashesFrom) {
      this.hashes.push(this.referenceOf(index, data, sha256));
      if (this.hashes.length >= HASH_BATCH) void this.flushHashes();
    }
    const { nodes, firstMorsel } = this.plan.plan;
    const owner = nodes[ownerSlot(index, firstMorsel, nodes.length)]!;
    if (owner.id === this.deps.me) return this.buffer.put(index, { data, sha256 });
    if (this.deadPeers.has(owner.id)) return;
    await this.pushes.acquire();
    void this.deps.peers
      .push(owner.url, `${this.path}/${index}`, data, sha256, this.plan.writeCapability)
      .catch((e: unknown) => {
        // The client notices the dead peer and asks the manager for a replacement session.
        this.deadPeers.add(owner.id);
        this.deps.log.warn({ session: this.id, peer: owner.id, err: String(e) }, 'shuffle failed');
      })
      .finally(() => this.pushes.release());
  }

  /**
   * What the manager keeps for a morsel it had no hash for: its SHA-256 in clear; for an
   * encrypted dataset the SHA-256 and AES-GCM tag of a sealed copy (what donors would store:
   * the nonce depends on the index only), while the plain bytes go to the reader, who checks
   * them against that tag on later reads. One AES-GCM pass over a copy, first patches only.
   */
  private referenceOf(index: number, data: Buffer, sha256: string): MorselHash {
    if (this.key === undefined) return { index, sha256 };
    const sealed = Buffer.from(data);
    const tag = sealInPlace(this.key, this.plan.plan.datasetId, index, sealed).toString('hex');
    return { index, sha256: createHash('sha256').update(sealed).digest('hex'), tag };
  }

  /** Read one morsel straight from the source into the buffer (once; errors leave it missing). */
  private fetchOne(index: number): void {
    if (this.fetching.has(index) || this.buffer.failed) return;
    this.fetching.add(index);
    const { morselSize, source } = this.plan;
    const start = index * morselSize;
    const end = Math.min(source.size, start + morselSize);
    const signal = this.controller.signal;
    void Promise.resolve(this.deps.admit?.(end - start, 'in', signal))
      .then(() => this.source.readRange(start, end, source, signal))
      .then((data) => {
        const sha256 = createHash('sha256').update(data).digest('hex');
        this.buffer.put(index, { data, sha256 });
      })
      .catch((e: unknown) => {
        if (isFreeLoaderError(e) && e.code === 'SOURCE_CHANGED') void this.failAll(e);
      })
      .finally(() => this.fetching.delete(index));
  }

  private closeIfDone(): void {
    const { plan } = this.plan;
    const owned = ownedCount(plan.firstMorsel, plan.endMorsel, plan.nodes.length, this.slot);
    if (this.downloaded && this.buffer.servedCount >= owned) void this.close();
  }

  private async failAll(error: FreeLoaderError): Promise<void> {
    this.buffer.fail(error);
    const body = { code: error.code, message: error.message };
    await Promise.all(
      this.plan.plan.nodes
        .filter((n) => n.id !== this.deps.me)
        .map((n) =>
          this.deps.peers
            .post(n.url, `${this.path}/fail`, body, this.plan.writeCapability)
            .catch(() => undefined),
        ),
    );
    await this.close(error);
  }

  /** End the session: stop downloading, drop buffers, report to the manager. Idempotent. */
  async close(error?: FreeLoaderError): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.controller.abort(error ?? new FreeLoaderError('UNAVAILABLE', 'patch session closed'));
    if (!this.buffer.failed) {
      this.buffer.fail(
        error ?? new FreeLoaderError('PATCH_SESSION_NOT_FOUND', 'patch session closed'),
      );
    }
    this.deps.onClosed(this.id);
    await this.flushHashes();
    const report: PatchReport = {
      bytes: this.stats.bytes,
      activeSeconds: this.stats.activeMs / 1000,
      requests: this.stats.requests,
      served: this.buffer.servedCount,
      ...(this.stats.firstByteMs !== undefined ? { latencyMs: this.stats.firstByteMs } : {}),
      ...(error ? { errorCode: error.code, error: error.message.slice(0, 2000) } : {}),
    };
    await this.deps.manager
      .request('POST', `/patch-sessions/${this.id}/report`, report)
      .catch((e: unknown) => this.deps.log.debug({ err: String(e) }, 'patch report failed'));
    await this.source.close().catch(() => undefined);
  }

  private async flushHashes(): Promise<void> {
    const batch = this.hashes;
    this.hashes = [];
    if (batch.length === 0) return;
    await this.deps.manager
      .request('POST', `/patch-sessions/${this.id}/hashes`, { hashes: batch })
      .catch((e: unknown) => this.deps.log.debug({ err: String(e) }, 'hash report failed'));
  }
}
