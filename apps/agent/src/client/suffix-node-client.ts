import { Pool } from 'undici';
import { FreeLoaderError, type SuffixPlan } from '@freeloader/protocol';
import {
  MORSEL_HASH_HEADER,
  patchMorselPath,
  patchSessionPath,
  SOURCE_ETAG_HEADER,
} from '@freeloader/protocol/wire';

/** Requests in flight to one patching node. */
export const PER_NODE_IN_FLIGHT = 4;
/** How long a GET may wait for its morsel to arrive at the node (the node answers 504 first). */
const LONG_POLL_MS = 90_000;

/**
 * HTTP to patching nodes for one reader: long-polling morsel GETs on keep-alive pools, and
 * joins, keep-alives and goodbyes on separate connections, so they are never queued behind
 * GETs waiting for morsels that will not come (a dead peer's).
 */
export class PatchNodeClient {
  private readonly pools = new Map<string, Pool>();
  private readonly control = new Map<string, Pool>();

  constructor(private readonly capability: string) {}

  /** Patched morsel `index` from the node at `url` into `target`, with its downloader's hash. */
  async get(
    plan: SuffixPlan,
    url: string,
    index: number,
    length: number,
    target: Buffer,
    signal?: AbortSignal,
  ): Promise<{ data: Buffer; sha256: string }> {
    let res;
    try {
      res = await this.pool(url).request({
        method: 'GET',
        path: patchMorselPath(plan.datasetId, plan.sessionId, index),
        headers: { authorization: `Bearer ${this.capability}` },
        signal,
      });
    } catch (e) {
      throw new FreeLoaderError('UNAVAILABLE', `patching node ${url}: ${String(e)}`);
    }
    if (res.statusCode !== 200) {
      throw FreeLoaderError.fromResponse(res.statusCode, await res.body.text().catch(() => ''));
    }
    const etag = res.headers[SOURCE_ETAG_HEADER];
    if (plan.etag && etag !== undefined && etag !== plan.etag) {
      await res.body.dump();
      throw new FreeLoaderError(
        'SOURCE_CHANGED',
        `patched morsel ${index} comes from source version ${String(etag)}, not ${plan.etag}`,
      );
    }
    let filled = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (filled + chunk.length > length) {
        throw new FreeLoaderError('HASH_MISMATCH', `patched morsel ${index} is too long`);
      }
      chunk.copy(target, filled);
      filled += chunk.length;
    }
    if (filled !== length) {
      throw new FreeLoaderError(
        'HASH_MISMATCH',
        `patched morsel ${index}: ${filled} of ${length} bytes`,
      );
    }
    return {
      data: target.subarray(0, length),
      sha256: String(res.headers[MORSEL_HASH_HEADER] ?? ''),
    };
  }

  /** Join (POST) or leave (DELETE) `plan`'s session on the node at `url`. */
  async send(url: string, method: 'POST' | 'DELETE', plan: SuffixPlan): Promise<void> {
    const res = await this.pool(url, this.control, 1).request({
      method,
      path: patchSessionPath(plan.datasetId, plan.sessionId),
      headers: { authorization: `Bearer ${this.capability}` },
      headersTimeout: 15_000,
    });
    const text = await res.body.text().catch(() => '');
    if (res.statusCode >= 300) throw FreeLoaderError.fromResponse(res.statusCode, text);
  }

  async close(): Promise<void> {
    const all = [...this.pools.values(), ...this.control.values()];
    this.pools.clear();
    this.control.clear();
    await Promise.all(all.map((p) => p.destroy()));
  }

  private pool(url: string, pools = this.pools, connections = PER_NODE_IN_FLIGHT): Pool {
    const origin = new URL(url).origin;
    let p = pools.get(origin);
    if (!p) {
      p = new Pool(origin, {
        connections,
        pipelining: 1,
        keepAliveTimeout: 60_000,
        headersTimeout: LONG_POLL_MS,
        bodyTimeout: 30_000,
      });
      pools.set(origin, p);
    }
    return p;
  }
}
