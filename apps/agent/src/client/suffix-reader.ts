import {
  FreeLoaderError,
  isFreeLoaderError,
  type DatasetMap,
  type SuffixPlan,
} from '@freeloader/protocol';
import { openSource, type Source } from '@freeloader/sources';
import { OWN_READS_POLICY } from './own-reads-policy.js';
import type { SuffixCheck } from './suffix-check.js';
import { PatchNodeClient } from './suffix-node-client.js';
import { replannerOf, type Replanner } from './suffix-plan.js';

/** New sessions a reader asks for before reading the rest of the suffix from the source. */
const MAX_REPLANS = 4;
/** Keep-alive to the nodes while the reader is in use (the nodes drop idle sessions). */
const KEEPALIVE_MS = 15_000;
/** A reader unused this long stops its keep-alive (a mount replaces readers on refresh). */
const ABANDONED_MS = 120_000;

/**
 * The client side of a collective download (seed 002 §4.1–4.2): reads the uncached suffix of a
 * dataset from its patching nodes, morsel m from node (m − first) mod p, while the prefix comes
 * from the storage donors. Every morsel is checked by the reader's {@link SuffixCheck}, and
 * the node must name the same source version (ETag) as the dataset. A node that
 * fails is replaced by asking the manager for a new session from the first morsel not yet
 * read; a morsel that can no longer be patched is read from the source by Range, pinned to the
 * imported version. A changed source fails the read with SOURCE_CHANGED.
 */
export class SuffixReader {
  readonly first: number;
  readonly end: number;
  private plan: SuffixPlan;
  private ready: Promise<void>;
  private replanning: Promise<void> | undefined;
  private replans = 0;
  private readonly excluded = new Set<string>();
  private readonly delivered = new Set<number>();
  private low: number;
  private readonly nodes: PatchNodeClient;
  private source: Source | undefined;
  private readonly timer: NodeJS.Timeout;
  private lastUse = performance.now();
  private closed = false;

  constructor(
    private readonly map: DatasetMap,
    plan: SuffixPlan,
    private readonly replanner: Replanner | undefined = replannerOf(plan),
  ) {
    this.plan = plan;
    this.first = plan.firstMorsel;
    this.end = plan.endMorsel;
    this.low = plan.firstMorsel;
    this.nodes = new PatchNodeClient(map.capability);
    this.ready = this.start(plan);
    this.timer = setInterval(() => this.keepAlive(), KEEPALIVE_MS);
    this.timer.unref();
  }

  /** Whether morsel `index` is patched rather than cached (and: the reader is in use). */
  covers(index: number): boolean {
    this.lastUse = performance.now();
    return index >= this.first && index < this.end;
  }

  /** The patching node serving `index` now ('' when the source is read directly). */
  nodeOf(index: number): string {
    const { nodes, firstMorsel } = this.plan;
    return nodes.length > 0 ? nodes[Math.abs(index - firstMorsel) % nodes.length]!.id : '';
  }

  /**
   * `indices` with the suffix reordered the way it arrives: every node downloads its requests
   * front to back at once, so morsel k of every request lands at about the same time. Reading
   * by (offset in request, request) keeps up with all of them instead of draining the later
   * requests at the end. Indices outside the suffix keep their place in front.
   *
   * @example // suffix 10…17, 4-morsel requests: 10 14 11 15 12 16 13 17
   */
  arrivalOrder(indices: readonly number[]): number[] {
    const per = Math.max(1, Math.floor(this.plan.requestSize / this.map.dataset.morselSize));
    const key = (m: number) => {
      const rel = m - this.first;
      return (rel % per) * (this.end - this.first + 1) + Math.floor(rel / per);
    };
    const rest = indices.filter((m) => !(m >= this.first && m < this.end));
    const suffix = indices.filter((m) => m >= this.first && m < this.end);
    return [...rest, ...suffix.sort((a, b) => key(a) - key(b))];
  }

  /** Patching nodes in the current plan. */
  get width(): number {
    return this.plan.nodes.length;
  }

  /**
   * Morsel `index` into `target`, verified by `check` (see {@link SuffixCheck}): from its
   * patching node, else from the source pinned to the imported version.
   */
  async readVerified(
    index: number,
    length: number,
    target: Buffer,
    check: SuffixCheck,
    signal?: AbortSignal,
  ): Promise<Buffer> {
    const got = await this.fromNodes(index, length, target, signal);
    if (got && (await check(got.sha256))) return this.done(index, got.data);
    // Lost, corrupted, or no node left: the source itself, pinned to the imported version.
    const bytes = await this.fromSource(index, length, signal);
    bytes.copy(target);
    if (!(await check(undefined))) {
      throw new FreeLoaderError(
        'SOURCE_CHANGED',
        `morsel ${index} from the source does not match the dataset's hash: the source changed`,
      );
    }
    return this.done(index, target.subarray(0, length));
  }

  /** Tell the patching nodes the client is done, and let go of connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await Promise.all(
      this.plan.nodes.map((n) =>
        this.nodes.send(n.url, 'DELETE', this.plan).catch(() => undefined),
      ),
    );
    await this.nodes.close();
    await this.source?.close().catch(() => undefined);
  }

  private done(index: number, data: Buffer): Buffer {
    this.delivered.add(index);
    while (this.delivered.has(this.low)) this.delivered.delete(this.low++);
    return data;
  }

  /** From the plan's node, replanning when nodes fail; null when the source must be read. */
  private async fromNodes(
    index: number,
    length: number,
    target: Buffer,
    signal?: AbortSignal,
  ): Promise<{ data: Buffer; sha256: string } | null> {
    let timeouts = 0;
    for (;;) {
      // A replan swaps `ready` for the new session's start: wait for the latest one.
      for (let r = this.ready; ; r = this.ready) {
        await r;
        if (r === this.ready) break;
      }
      const plan = this.plan;
      if (plan.nodes.length === 0) return null;
      const node = plan.nodes[(index - plan.firstMorsel) % plan.nodes.length]!;
      try {
        return await this.nodes.get(plan, node.url, index, length, target, signal);
      } catch (e) {
        signal?.throwIfAborted();
        const err = isFreeLoaderError(e) ? e : new FreeLoaderError('UNAVAILABLE', String(e));
        if (err.code === 'SOURCE_CHANGED') throw err;
        if (err.code === 'MORSEL_GONE' || err.code === 'HASH_MISMATCH') return null;
        // Someone already replaced the session; or the node is alive and the morsel is still
        // on its way (a slow source: its request is long); ask again.
        if (this.plan !== plan || (err.code === 'TIMEOUT' && ++timeouts < 3)) continue;
        await this.replan(plan, [node.id]);
      }
    }
  }

  /** Replace `old` by a new session from the first morsel not yet read (one at a time). */
  private replan(old: SuffixPlan, failed: string[]): Promise<void> {
    this.replanning ??= (async () => {
      try {
        if (this.plan !== old) return;
        for (const id of failed) this.excluded.add(id);
        const survivors = old.nodes.filter((n) => !failed.includes(n.id));
        void Promise.all(
          survivors.map((n) => this.nodes.send(n.url, 'DELETE', old).catch(() => 0)),
        );
        if (!this.replanner || ++this.replans > MAX_REPLANS) {
          this.plan = { ...old, nodes: [] };
          return;
        }
        this.plan = await this.replanner({
          fromMorsel: this.low,
          exclude: [...this.excluded],
          replaces: old.sessionId,
        });
        this.ready = this.start(this.plan);
      } finally {
        this.replanning = undefined;
      }
    })();
    return this.replanning;
  }

  /** Ask every node of `plan` to join; nodes that cannot are replaced before any read. */
  private async start(plan: SuffixPlan): Promise<void> {
    const results = await Promise.all(
      plan.nodes.map((n) =>
        this.nodes.send(n.url, 'POST', plan).then(
          () => null,
          () => n.id,
        ),
      ),
    );
    const failed = results.filter((id): id is string => id !== null);
    if (failed.length > 0 && this.plan === plan) {
      this.ready = Promise.resolve();
      await this.replan(plan, failed);
    }
  }

  private keepAlive(): void {
    if (this.closed || performance.now() - this.lastUse > ABANDONED_MS || this.low >= this.end) {
      return;
    }
    for (const n of this.plan.nodes)
      void this.nodes.send(n.url, 'POST', this.plan).catch(() => undefined);
  }

  private async fromSource(index: number, length: number, signal?: AbortSignal): Promise<Buffer> {
    const { sourceUri, sizeBytes, etag, lastModified, morselSize } = this.map.dataset;
    if (!sourceUri) throw new FreeLoaderError('UNAVAILABLE', `morsel ${index} has no source`);
    this.source ??= openSource(sourceUri, { connections: 2, policy: OWN_READS_POLICY });
    const start = index * morselSize;
    const info = { uri: sourceUri, size: sizeBytes, etag, lastModified, acceptsRanges: true };
    return this.source.readRange(start, start + length, info, signal);
  }
}
