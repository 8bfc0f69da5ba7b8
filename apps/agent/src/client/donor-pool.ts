import { Pool } from 'undici';
import { FreeLoaderError } from '@freeloader/protocol';
import { describeNetError } from '../manager-client.js';

/** A donor that sends no byte for this long is stalled (milliseconds). */
export const DONOR_STALL_TIMEOUT_MS = 10_000;

/**
 * Keep-alive connection pools, one per donor, shared by every read of a client. Morsel GETs are
 * plain HTTP/1.1 so they stay debuggable with curl.
 */
export class DonorPools {
  private readonly pools = new Map<string, Pool>();

  constructor(
    private readonly connectionsPerDonor = 4,
    private readonly stallTimeoutMs = DONOR_STALL_TIMEOUT_MS,
  ) {}

  private pool(origin: string): Pool {
    let p = this.pools.get(origin);
    if (!p) {
      p = new Pool(origin, {
        connections: this.connectionsPerDonor,
        pipelining: 1,
        keepAliveTimeout: 60_000,
        headersTimeout: this.stallTimeoutMs,
        bodyTimeout: this.stallTimeoutMs,
      });
      this.pools.set(origin, p);
    }
    return p;
  }

  /**
   * GET one morsel into a buffer of exactly `length` bytes.
   * Throws MORSEL_NOT_FOUND, CAPABILITY_*, TIMEOUT or UNAVAILABLE as coded errors.
   */
  async getMorsel(
    donorUrl: string,
    datasetId: string,
    index: number,
    length: number,
    capability: string,
    signal?: AbortSignal,
  ): Promise<Buffer> {
    const url = new URL(donorUrl);
    let res;
    try {
      res = await this.pool(url.origin).request({
        method: 'GET',
        path: `/v1/morsels/${datasetId}/${index}`,
        headers: { authorization: `Bearer ${capability}` },
        signal,
      });
    } catch (e) {
      throw netError(donorUrl, e);
    }
    if (res.statusCode !== 200) {
      const text = await res.body.text().catch(() => '');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep text
      }
      throw FreeLoaderError.fromResponse(res.statusCode, body);
    }
    const out = Buffer.allocUnsafe(length);
    let filled = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (filled + chunk.length > length) {
          res.body.destroy();
          throw new FreeLoaderError(
            'HASH_MISMATCH',
            `donor sent more than ${length} bytes for morsel ${index}`,
          );
        }
        chunk.copy(out, filled);
        filled += chunk.length;
      }
    } catch (e) {
      if (e instanceof FreeLoaderError) throw e;
      throw netError(donorUrl, e);
    }
    if (filled !== length) {
      throw new FreeLoaderError(
        'HASH_MISMATCH',
        `donor sent ${filled} of ${length} bytes for morsel ${index}`,
      );
    }
    return out;
  }

  /** PUT one morsel to a donor (stream imports distribute what one donor reads). */
  async putMorsel(
    donorUrl: string,
    datasetId: string,
    index: number,
    data: Buffer,
    sha256Hex: string,
    capability: string,
    signal?: AbortSignal,
  ): Promise<void> {
    const url = new URL(donorUrl);
    let res;
    try {
      res = await this.pool(url.origin).request({
        method: 'PUT',
        path: `/v1/morsels/${datasetId}/${index}`,
        headers: {
          authorization: `Bearer ${capability}`,
          'content-type': 'application/octet-stream',
          'x-morsel-sha256': sha256Hex,
        },
        body: data,
        signal,
      });
    } catch (e) {
      throw netError(donorUrl, e);
    }
    const text = await res.body.text().catch(() => '');
    if (res.statusCode >= 300) {
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep text
      }
      throw FreeLoaderError.fromResponse(res.statusCode, body);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
  }
}

function netError(donorUrl: string, e: unknown): FreeLoaderError {
  const name = (e as { name?: string; code?: string })?.code ?? (e as { name?: string })?.name;
  if (name === 'UND_ERR_HEADERS_TIMEOUT' || name === 'UND_ERR_BODY_TIMEOUT') {
    return new FreeLoaderError('TIMEOUT', `donor ${donorUrl} stalled`, undefined, e);
  }
  if (name === 'AbortError')
    return new FreeLoaderError('TIMEOUT', `read from ${donorUrl} aborted`, undefined, e);
  return new FreeLoaderError(
    'UNAVAILABLE',
    `donor ${donorUrl} unreachable (${describeNetError(e)})`,
    undefined,
    e,
  );
}
