import { createHash } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateContent, selfSignedCert } from './test-content.js';

/** How fast bytes past `holdFrom` go out while held (bytes/second): a trickle, never silence. */
export const HELD_BYTES_PER_SECOND = 20;

/** Behaviour of a {@link startTestServer} server; `set` changes any of it at runtime except tls, size, content and seed. */
export interface TestServerOptions {
  /** Dataset size in bytes when `content` is not given (default 1 MiB + 123). */
  size?: number;
  /** Exact content to serve (default: `generateContent(size, seed)`). */
  content?: Buffer;
  seed?: number;
  /** Honour Range requests (default true); off, the server never sends Accept-Ranges. */
  ranges?: boolean;
  /** Send an ETag (default true). */
  etag?: boolean;
  /** Send Last-Modified (default true). */
  lastModified?: boolean;
  /** Answer HEAD (default true); off, HEAD gets 405. */
  head?: boolean;
  /** Honour If-Match / If-Unmodified-Since (default true); off, like servers that ignore them. */
  ifMatch?: boolean;
  /** Honour If-Range (default true); off, ranges are served whatever the validator says. */
  ifRange?: boolean;
  /** After this many requests the content changes once (new bytes, new ETag, later date). */
  changeAfter?: number;
  /** Answer every request with this status (404, 403, 500 …). */
  status?: number;
  /** 'loop': redirect forever; a number: redirect that many times, then serve. */
  redirect?: 'loop' | number;
  /** Wait before answering each request (ms). */
  delayMs?: number;
  /** Per-connection rate limit (bytes/second) for bodies; a change applies to bodies in flight. */
  bytesPerSecond?: number;
  /** Send only this many body bytes, then drop the connection (short-body tests). */
  truncateAt?: number;
  /** Send this many body bytes, then go silent with the connection open (idle-timeout tests). */
  stallAfter?: number;
  /**
   * Bytes at or past this offset of the content trickle out at HELD_BYTES_PER_SECOND until
   * `set({ holdFrom: undefined })`: a transfer the test can catch mid-way for as long as it
   * needs, on any machine load (still sending, so no client idle timeout fires).
   */
  holdFrom?: number;
  /** Serve https with a runtime self-signed certificate (needs openssl). */
  tls?: boolean;
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  readonly status: number;
}

export interface TestServer {
  /** URL of the dataset, e.g. http://127.0.0.1:41234/data.bin */
  readonly url: string;
  /** Requests received so far. */
  readonly requests: number;
  /** TCP connections accepted so far (keep-alive reuse keeps this low). */
  readonly connections: number;
  /** Body bytes written so far, over every response (what the source served). */
  readonly bodyBytes: number;
  /** Every request in arrival order, with the status it was answered (0 until answered). */
  readonly seen: ReadonlyArray<SeenRequest>;
  /** The content currently served and its ETag. */
  readonly content: Buffer;
  readonly etag: string;
  /** PEM certificate of an https server (trust it with the source's `ca` option). */
  readonly cert: string | null;
  /** Replace the content (new ETag and Last-Modified). */
  setContent(buf: Buffer): void;
  /** Change behaviour from now on. */
  set(options: Partial<TestServerOptions>): void;
  close(): Promise<void>;
}

const BASE_DATE = Date.UTC(2024, 0, 1);

/**
 * A real HTTP(S) server on 127.0.0.1:0 serving one deterministic dataset, for integration
 * tests of anything that imports from a URI. Not for production use.
 *
 * @example
 *   const srv = await startTestServer({ size: 4096, changeAfter: 2 });
 *   const src = openSource(srv.url); … await srv.close();
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const opts: TestServerOptions = { ...options };
  let content = opts.content ?? generateContent(opts.size ?? 1024 * 1024 + 123, opts.seed ?? 1);
  let version = 0;
  let etag = '';
  let requests = 0;
  let connections = 0;
  let bodyBytes = 0;
  let changed = false;
  const seen: SeenRequest[] = [];

  const setContent = (buf: Buffer) => {
    content = buf;
    version++;
    etag = `"${createHash('sha256').update(buf).digest('hex').slice(0, 16)}-${version}"`;
  };
  setContent(content);
  const lastModified = () => new Date(BASE_DATE + version * 60_000).toUTCString();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    requests++;
    const path = req.url ?? '/';
    seen.push({
      method: req.method ?? '',
      path,
      headers: req.headers,
      get status() {
        return res.headersSent ? res.statusCode : 0;
      },
    });
    if (opts.changeAfter !== undefined && requests > opts.changeAfter && !changed) {
      changed = true;
      setContent(generateContent(content.length, (opts.seed ?? 1) + 1000));
    }
    if (opts.delayMs) await sleep(opts.delayMs);
    if (opts.status !== undefined)
      return void res.writeHead(opts.status).end(`status ${opts.status}`);

    const hop = Number(/^\/hop\/(\d+)$/.exec(path)?.[1] ?? 0);
    if (opts.redirect === 'loop' || (typeof opts.redirect === 'number' && hop < opts.redirect)) {
      const next = opts.redirect === 'loop' ? `/loop/${requests}` : `/hop/${hop + 1}`;
      return void res.writeHead(302, { location: next }).end();
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405).end();
    if (req.method === 'HEAD' && opts.head === false) return void res.writeHead(405).end();

    const useEtag = opts.etag !== false;
    const useDate = opts.lastModified !== false;
    const headers: Record<string, string> = {};
    if (useEtag) headers.etag = etag;
    if (useDate) headers['last-modified'] = lastModified();
    if (opts.ranges !== false) headers['accept-ranges'] = 'bytes';

    const ifMatch = req.headers['if-match'];
    const since = req.headers['if-unmodified-since'];
    const matchFails =
      opts.ifMatch !== false &&
      ifMatch !== undefined &&
      ifMatch !== '*' &&
      (!useEtag || !ifMatch.split(/\s*,\s*/).includes(etag));
    const sinceFails =
      opts.ifMatch !== false &&
      since !== undefined &&
      useDate &&
      Date.parse(lastModified()) > Date.parse(since);
    if (matchFails || sinceFails) return void res.writeHead(412, headers).end();

    const range = parseRange(req.headers.range, content.length);
    const ifRange = req.headers['if-range'];
    const rangeValid =
      ifRange === undefined ||
      opts.ifRange === false ||
      (useEtag && ifRange === etag) ||
      (useDate && ifRange === lastModified());
    if (opts.ranges !== false && range !== null && rangeValid && req.method === 'GET') {
      if (range === 'unsatisfiable') {
        headers['content-range'] = `bytes */${content.length}`;
        return void res.writeHead(416, headers).end();
      }
      const [first, last] = range;
      headers['content-range'] = `bytes ${first}-${last}/${content.length}`;
      return send(res, 206, headers, content.subarray(first, last + 1), first);
    }
    return send(res, 200, headers, content, 0, req.method === 'HEAD');
  }

  async function send(
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body: Buffer,
    offset: number,
    headOnly = false,
  ): Promise<void> {
    res.writeHead(status, { ...headers, 'content-length': String(body.length) });
    if (headOnly) return void res.end();
    const limit = Math.min(body.length, opts.truncateAt ?? Infinity, opts.stallAfter ?? Infinity);
    // Rate limit: 20 slices a second. No pipelining, so one response per connection at a time.
    // The rate is read per slice, so `set({ bytesPerSecond })` also slows bodies in flight.
    for (let at = 0; at < limit && !res.destroyed;) {
      // Read per slice too: a release lets held bodies go on at the current rate.
      const holdAt = opts.holdFrom === undefined ? Infinity : opts.holdFrom - offset;
      const held = at >= holdAt;
      const rate = held ? HELD_BYTES_PER_SECOND : opts.bytesPerSecond;
      const slice = rate ? Math.max(1, Math.floor(rate / 20)) : body.length;
      const chunk = body.subarray(at, Math.min(at + slice, limit, held ? Infinity : holdAt));
      at += chunk.length;
      bodyBytes += chunk.length;
      if (!res.write(chunk)) await drainOrClose(res);
      if ((rate || at === holdAt) && at < limit) await sleep(50);
    }
    if (limit < body.length && opts.stallAfter === undefined) return void res.socket?.end();
    if (limit < body.length) return; // stalled: the client must time out
    res.end();
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch(() => res.destroy());
  };
  const cert = opts.tls ? selfSignedCert() : null;
  if (opts.tls && cert === null) throw new Error('test server: https needs openssl on PATH');
  const server = cert ? createHttpsServer({ ...cert }, onRequest) : createServer(onRequest);
  server.on(cert ? 'secureConnection' : 'connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `${cert ? 'https' : 'http'}://127.0.0.1:${port}/data.bin`,
    get requests() {
      return requests;
    },
    get connections() {
      return connections;
    },
    get bodyBytes() {
      return bodyBytes;
    },
    seen,
    get content() {
      return content;
    },
    get etag() {
      return etag;
    },
    cert: cert?.cert ?? null,
    setContent,
    set: (more) => Object.assign(opts, more),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A single `bytes=a-b` / `bytes=a-` / `bytes=-n` range; null when absent or not understood. */
function parseRange(
  value: string | undefined,
  size: number,
): [number, number] | 'unsatisfiable' | null {
  const m = value === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(value.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let first: number;
  let last: number;
  if (m[1] === '') {
    first = Math.max(0, size - Number(m[2]));
    last = size - 1;
  } else {
    first = Number(m[1]);
    last = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (first >= size || first > last) return 'unsatisfiable';
  return [first, last];
}

/** Wait for `drain` or `close`, removing both listeners (a slow client drains hundreds of times). */
function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
