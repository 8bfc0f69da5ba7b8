import { rootCertificates } from 'node:tls';
import { Readable } from 'node:stream';
import { Pool } from 'undici';
import { FreeLoaderError } from '@freeloader/protocol';
import { collect, exactStream } from './exact-stream.js';
import { mapTransportError, statusError } from './http-errors.js';
import {
  contentRange,
  discard,
  drain,
  header,
  intHeader,
  REDIRECTS,
  basicAuth,
  send,
  type Headers,
  type HttpResponse,
} from './http-request.js';
import { assertSameVersion, preconditions } from './http-validators.js';
import type { Source, SourceInfo, SourceOptions } from './source.js';
import { checkRange } from './range.js';
import { RangePool } from './range-pool.js';
import { rangeRead, UNSUITABLE } from './range-read.js';
import { redactUri } from './uri.js';
import { SourcePolicy } from './source-policy.js';

/**
 * http/https source over undici keep-alive Pools (one per origin, `connections` sockets each,
 * no pipelining). Ranged reads are pinned to the probed version with If-Match/If-Range
 * and must come back 206 with the exact Content-Range asked for.
 *
 * A 200 answering a ranged read means one of two things. With a validator sent, If-Range
 * told the server to send the whole object only if it changed → SOURCE_CHANGED. With no
 * validator to send, the server simply ignores Range → RANGE_NOT_SUPPORTED, and the caller
 * falls back to `readAll` deliberately. (Probe reports `acceptsRanges: false` for such servers
 * up front, so the second case only arises when a server's behaviour changes.)
 *
 * `readRange` over plain http uses a lean keep-alive client whose socket reads land in the
 * caller's buffer (see RangeConnection): importing a GiB through undici's streams left ~90 MB
 * of socket chunks for the collector on every donor. Answers it does not handle (redirects,
 * chunked bodies) switch this source to undici for good.
 */
export class HttpSource implements Source {
  readonly uri: string;
  private readonly url: URL;
  private readonly where: string;
  private readonly pools = new Map<string, Pool>();
  private readonly poolOptions: Pool.Options;
  private readonly maxRedirects: number;
  private readonly policy: SourcePolicy;
  private readonly lean: RangePool | null;
  /** Set once the lean client met an answer it leaves to undici; reads in flight finish first. */
  private leanOff = false;
  private closed = false;

  constructor(url: URL, options: SourceOptions = {}) {
    this.url = url;
    this.uri = url.href;
    this.where = redactUri(url);
    this.maxRedirects = options.maxRedirects ?? 5;
    this.policy = options.policy ?? SourcePolicy.fromEnv();
    const extraCa = options.ca === undefined ? [] : [options.ca].flat();
    this.poolOptions = {
      connections: options.connections ?? 4,
      pipelining: 1,
      headersTimeout: options.headersTimeoutMs ?? 30_000,
      bodyTimeout: options.bodyIdleTimeoutMs ?? 30_000,
      connect: {
        timeout: options.connectTimeoutMs ?? 10_000,
        // Every name is resolved through the policy: the address connected to is the one checked.
        lookup: this.policy.lookup,
        // `ca` replaces the default trust store in Node; extend it instead.
        ...(extraCa.length > 0 ? { ca: [...rootCertificates, ...extraCa] } : {}),
      },
    };
    this.lean =
      url.protocol === 'http:'
        ? new RangePool(
            url.hostname.replace(/^\[|\]$/g, ''),
            Number(url.port || 80),
            options.connections ?? 4,
            {
              connectMs: options.connectTimeoutMs ?? 10_000,
              headersMs: options.headersTimeoutMs ?? 30_000,
              bodyIdleMs: options.bodyIdleTimeoutMs ?? 30_000,
            },
            () => this.closedError(),
            this.policy.lookup,
          )
        : null;
  }

  async probe(signal?: AbortSignal): Promise<SourceInfo> {
    const res = await this.send('HEAD', {}, signal);
    await drain(res.body);
    // HEAD refused (405/501) or not telling enough: ask for one byte instead.
    if (res.status === 405 || res.status === 501) return this.probeByGet(signal);
    if (res.status < 200 || res.status > 299) throw statusError(res.status, this.where);
    const size = intHeader(res.headers, 'content-length');
    const ranges = (header(res.headers, 'accept-ranges') ?? '').toLowerCase();
    if (size === null || !ranges.includes('bytes')) {
      if (ranges.includes('none') && size !== null) return this.info(res, size, false);
      return this.probeByGet(signal);
    }
    return this.info(res, size, true);
  }

  async readRange(
    start: number,
    end: number,
    expect: SourceInfo,
    signal?: AbortSignal,
    into?: Buffer,
  ): Promise<Buffer> {
    checkRange(start, end, expect.size);
    if (into && into.length < end - start) {
      throw new RangeError(`readRange: a ${into.length}-byte buffer cannot hold ${end - start}`);
    }
    const out = into ? into.subarray(0, end - start) : Buffer.allocUnsafe(end - start);
    if (this.lean && !this.leanOff && start < end && expect.acceptsRanges) {
      if (this.closed) throw this.closedError();
      this.policy.assertUrl(this.url);
      const pre = preconditions(expect, true);
      const res = await rangeRead(
        this.lean,
        this.url.pathname + this.url.search,
        this.url.host,
        { range: `bytes=${start}-${end - 1}`, ...pre, ...basicAuth(this.url) },
        out,
        this.where,
        signal,
      );
      if (res !== UNSUITABLE && !REDIRECTS.has(res.status)) {
        this.vetRange(res.status, res.headers, start, end, expect, Object.keys(pre).length > 0);
        return out;
      }
      // Redirected, chunked or otherwise unusual: undici from now on (it follows redirects).
      // The pool stays open until close(): reads queued on it fall back the same way.
      this.leanOff = true;
    }
    return collect(await this.streamRange(start, end, expect, signal), end - start, out);
  }

  async streamRange(
    start: number,
    end: number,
    expect: SourceInfo,
    signal?: AbortSignal,
  ): Promise<Readable> {
    checkRange(start, end, expect.size);
    if (!expect.acceptsRanges) {
      throw new FreeLoaderError(
        'RANGE_NOT_SUPPORTED',
        `${this.where}: server does not support ranged reads; read the whole object instead`,
      );
    }
    if (start === end) return Readable.from([]);
    const pre = preconditions(expect, true);
    const res = await this.send('GET', { range: `bytes=${start}-${end - 1}`, ...pre }, signal);
    try {
      this.vetRange(res.status, res.headers, start, end, expect, Object.keys(pre).length > 0);
      return this.body(res, end - start, signal);
    } catch (err) {
      discard(res.body);
      throw err;
    }
  }

  /**
   * Vet a ranged response: returns when its body is exactly bytes [start, end) of the probed
   * version, else throws a clear error.
   */
  private vetRange(
    status: number,
    headers: HttpResponse['headers'],
    start: number,
    end: number,
    expect: SourceInfo,
    validated: boolean,
  ): void {
    if (status === 206) {
      const cr = contentRange(headers);
      const len = intHeader(headers, 'content-length');
      if (cr?.size != null && cr.size !== expect.size) this.fail(status, 'SOURCE_CHANGED', 'size');
      assertSameVersion(expect, headers, null, this.where);
      if (cr?.first !== start || cr.last !== end - 1 || (len !== null && len !== end - start)) {
        const got = header(headers, 'content-range') ?? 'no Content-Range';
        this.fail(status, 'SOURCE_ERROR', `asked for bytes ${start}-${end - 1}, got ${got}`);
      }
      return;
    }
    if (status === 200) {
      if (start === 0 && end === expect.size) {
        assertSameVersion(expect, headers, intHeader(headers, 'content-length'), this.where);
        return;
      }
      if (validated) this.fail(status, 'SOURCE_CHANGED', 'whole object sent');
      this.fail(status, 'RANGE_NOT_SUPPORTED', 'server ignored the Range header');
    }
    // The range was checked against the probed size: 416 means the object shrank.
    if (status === 416) this.fail(status, 'SOURCE_CHANGED', 'range no longer satisfiable');
    throw statusError(status, this.where);
  }

  async readAll(expect: SourceInfo, signal?: AbortSignal): Promise<Readable> {
    const res = await this.send('GET', preconditions(expect, false), signal);
    if (res.status !== 200) {
      await drain(res.body);
      throw statusError(res.status, this.where);
    }
    try {
      assertSameVersion(expect, res.headers, intHeader(res.headers, 'content-length'), this.where);
    } catch (err) {
      discard(res.body);
      throw err;
    }
    return this.body(res, expect.size, signal);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.lean?.close();
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }

  /** Probe with `GET Range: bytes=0-0`: 206 proves ranges; 200 means none (body dropped). */
  private async probeByGet(signal?: AbortSignal): Promise<SourceInfo> {
    const res = await this.send('GET', { range: 'bytes=0-0' }, signal);
    const cr = contentRange(res.headers);
    if ((res.status === 206 || res.status === 416) && cr?.size != null) {
      await drain(res.body);
      return this.info(res, cr.size, true);
    }
    const size = intHeader(res.headers, 'content-length');
    discard(res.body); // never download the whole object just to learn its size
    if (res.status === 200 && size !== null) return this.info(res, size, false);
    if (res.status >= 200 && res.status <= 299) {
      throw new FreeLoaderError('SOURCE_ERROR', `${this.where}: server does not say the size`);
    }
    throw statusError(res.status, this.where);
  }

  private info(res: HttpResponse, size: number, acceptsRanges: boolean): SourceInfo {
    return {
      uri: this.uri,
      size,
      etag: header(res.headers, 'etag') ?? null,
      lastModified: header(res.headers, 'last-modified') ?? null,
      acceptsRanges,
    };
  }

  private send(method: 'GET' | 'HEAD', headers: Headers, signal?: AbortSignal) {
    const opts = {
      method,
      headers,
      maxRedirects: this.maxRedirects,
      where: this.where,
      signal,
      policy: this.policy,
    };
    return send((origin) => this.pool(origin), this.url, opts);
  }

  /**
   * One Pool per origin, kept until close(). (undici's Agent is not used: in 7.x it drops an
   * origin's pool when its sockets close — e.g. after every HEAD — and a stale disconnect then
   * closes the replacement pool too, so keep-alive never takes hold.)
   */
  private pool(origin: string): Pool {
    if (this.closed) throw this.closedError();
    let pool = this.pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, this.poolOptions);
      this.pools.set(origin, pool);
    }
    return pool;
  }

  private body(res: HttpResponse, length: number, signal?: AbortSignal): Readable {
    return exactStream(res.body, length, this.where, (err) =>
      mapTransportError(err, this.where, signal),
    );
  }

  private closedError(): FreeLoaderError {
    return new FreeLoaderError('SOURCE_ERROR', `${this.where}: source is closed`);
  }

  private fail(
    status: number,
    code: 'SOURCE_CHANGED' | 'SOURCE_ERROR' | 'RANGE_NOT_SUPPORTED',
    why: string,
  ): never {
    const what = code === 'SOURCE_CHANGED' ? `source changed during import (${why})` : why;
    throw new FreeLoaderError(code, `${this.where}: ${what}`, { status });
  }
}
