import { Pool } from 'undici';
import { FreeLoaderError } from '@freeloader/protocol';
import { MORSEL_CONTENT_TYPE, MORSEL_HASH_HEADER, morselPath } from '@freeloader/protocol/wire';
import { describeNetError } from '../manager-client.js';
import { MorselConnection, type MorselResponse } from './morsel-connection.js';

/** A donor that sends no byte for this long is stalled (milliseconds). */
export const DONOR_STALL_TIMEOUT_MS = 10_000;

/**
 * Keep-alive connections to one donor. One is the default: requests are pipelined on it, and a
 * single TCP flow fills a shaped link where several flows would overflow its queue and stall on
 * retransmits (measured on 100 Mbit/s tbf links: 4 connections per donor reached 0.25 of the
 * link at width 8, one pipelined connection 0.78+).
 */
class DonorLanes {
  private conns: MorselConnection[] = [];
  /** TCP connection attempts to this donor so far. */
  connects = 0;
  private readonly counted = (): void => {
    this.connects++;
  };

  constructor(
    private readonly url: URL,
    private readonly size: number,
    private readonly stallMs: number,
  ) {}

  get(path: string, auth: string, target: Buffer): Promise<MorselResponse> {
    this.conns = this.conns.filter((c) => !c.closed);
    let conn = this.conns.reduce<MorselConnection | undefined>(
      (best, c) => (!best || c.inFlight < best.inFlight ? c : best),
      undefined,
    );
    if (!conn || (conn.inFlight > 0 && this.conns.length < this.size)) {
      const port = Number(this.url.port || (this.url.protocol === 'https:' ? 443 : 80));
      const host = this.url.hostname.replace(/^\[|\]$/g, '');
      conn = new MorselConnection(host, port, this.url.host, this.stallMs, this.counted);
      this.conns.push(conn);
    }
    return conn.get(path, auth, target);
  }

  destroy(error?: Error): void {
    for (const c of this.conns) c.destroy(error);
    this.conns = [];
  }
}

/**
 * Keep-alive connection pools, one per donor, shared by every read of a client. Morsel GETs are
 * plain HTTP/1.1 so they stay debuggable with curl.
 */
export class DonorPools {
  private readonly pools = new Map<string, Pool>();
  private readonly byDonor = new Map<string, DonorLanes>();

  constructor(
    private readonly connectionsPerDonor = Number(process.env.FREELOADER_DONOR_CONNECTIONS ?? 1),
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
   * GET one morsel into `target` (or a new buffer) — exactly `length` bytes, returned as a view.
   * Throws MORSEL_NOT_FOUND, CAPABILITY_*, TIMEOUT or UNAVAILABLE as coded errors.
   */
  async getMorsel(
    donorUrl: string,
    datasetId: string,
    index: number,
    length: number,
    capability: string,
    target: Buffer = Buffer.allocUnsafe(length),
  ): Promise<Buffer> {
    const res = await this.lanes(donorUrl).get(
      morselPath(datasetId, index),
      `Bearer ${capability}`,
      target,
    );
    if (res.status !== 200) {
      throw FreeLoaderError.fromResponse(res.status, res.errorBody);
    }
    if (res.length !== length) {
      throw new FreeLoaderError(
        'HASH_MISMATCH',
        `donor sent ${res.length} of ${length} bytes for morsel ${index}`,
      );
    }
    return target.subarray(0, length);
  }

  /**
   * TCP connection attempts made to the donor at `donorUrl` by morsel GETs of this pool: how a
   * read shows it never contacted a donor it should route around.
   */
  connectionAttempts(donorUrl: string): number {
    return this.byDonor.get(donorUrl)?.connects ?? 0;
  }

  /**
   * Give up on every morsel GET outstanding on `donorUrl` (it stalled): its connections close and
   * each request fails with `error`, so its reader asks another copy or the source; an answer
   * arriving later is never read. The next GET opens a new connection.
   */
  abandon(donorUrl: string, error: Error): void {
    this.byDonor.get(donorUrl)?.destroy(error);
  }

  private lanes(donorUrl: string): DonorLanes {
    let l = this.byDonor.get(donorUrl);
    if (!l) {
      l = new DonorLanes(new URL(donorUrl), this.connectionsPerDonor, this.stallTimeoutMs);
      this.byDonor.set(donorUrl, l);
    }
    return l;
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
        path: morselPath(datasetId, index),
        headers: {
          authorization: `Bearer ${capability}`,
          'content-type': MORSEL_CONTENT_TYPE,
          [MORSEL_HASH_HEADER]: sha256Hex,
        },
        body: data,
        signal,
      });
    } catch (e) {
      throw netError(donorUrl, e);
    }
    const text = await res.body.text().catch(() => '');
    if (res.statusCode >= 300) {
      throw FreeLoaderError.fromResponse(res.statusCode, text);
    }
  }

  async close(): Promise<void> {
    for (const l of this.byDonor.values()) l.destroy();
    this.byDonor.clear();
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
