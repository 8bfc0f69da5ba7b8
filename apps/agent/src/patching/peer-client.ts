import { Pool } from 'undici';
import { FreeLoaderError } from '@freeloader/protocol';
import { MORSEL_CONTENT_TYPE, MORSEL_HASH_HEADER } from '@freeloader/protocol/wire';

/** A peer that does not answer a push within this long is treated as gone (milliseconds). */
const PUSH_TIMEOUT_MS = 30_000;

/**
 * Keep-alive connections from a patching node to its peers, for the shuffle: each downloaded
 * morsel goes to the node that serves it (`PUT /v1/patch/:dataset/:session/:index`).
 */
export class PeerClient {
  private readonly pools = new Map<string, Pool>();

  private pool(url: string): Pool {
    const origin = new URL(url).origin;
    let p = this.pools.get(origin);
    if (!p) {
      p = new Pool(origin, {
        connections: 2,
        pipelining: 1,
        keepAliveTimeout: 60_000,
        headersTimeout: PUSH_TIMEOUT_MS,
        bodyTimeout: PUSH_TIMEOUT_MS,
      });
      this.pools.set(origin, p);
    }
    return p;
  }

  /** PUT one patched morsel to a peer; throws UNAVAILABLE when it cannot be reached. */
  async push(
    peerUrl: string,
    path: string,
    data: Buffer,
    sha256: string,
    capability: string,
  ): Promise<void> {
    let res;
    try {
      res = await this.pool(peerUrl).request({
        method: 'PUT',
        path,
        headers: {
          authorization: `Bearer ${capability}`,
          'content-type': MORSEL_CONTENT_TYPE,
          [MORSEL_HASH_HEADER]: sha256,
        },
        body: data,
      });
    } catch (e) {
      throw new FreeLoaderError('UNAVAILABLE', `peer ${peerUrl}: ${String(e)}`);
    }
    const text = await res.body.text().catch(() => '');
    if (res.statusCode >= 300) {
      throw FreeLoaderError.fromResponse(res.statusCode, text);
    }
  }

  /** POST a small JSON body to a peer (best effort: failures are the caller's to ignore). */
  async post(peerUrl: string, path: string, body: unknown, capability: string): Promise<void> {
    const res = await this.pool(peerUrl).request({
      method: 'POST',
      path,
      headers: { authorization: `Bearer ${capability}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await res.body.dump();
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }
}
