import type { Dispatcher } from 'undici';
import { FreeLoaderError } from '@freeloader/protocol';
import { mapTransportError } from './http-errors.js';
import type { SourcePolicy } from './source-policy.js';

export type Headers = Record<string, string>;

export interface HttpResponse {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Dispatcher.ResponseData['body'];
  /** Where the response finally came from, after redirects. */
  url: URL;
}

export interface SendOptions {
  method: 'GET' | 'HEAD';
  headers: Headers;
  maxRedirects: number;
  /** Redacted name of the source for messages. */
  where: string;
  signal?: AbortSignal | undefined;
  /** Refuses forbidden IP literals here, on the first hop and every redirect (names: at DNS). */
  policy: SourcePolicy;
}

/** Statuses `send` follows (with a Location). */
export const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * One request through the pool for its origin, following up to `maxRedirects` redirects itself so a loop gets
 * a clear error and credentials from the URI never follow a redirect to another origin.
 * Transport failures become FreeLoaderErrors (see {@link mapTransportError}).
 */
export async function send(
  poolFor: (origin: string) => Dispatcher,
  start: URL,
  opts: SendOptions,
): Promise<HttpResponse> {
  let url = start;
  for (let hop = 0; ; hop++) {
    // URI credentials go to the URI's own origin only, never along a redirect elsewhere.
    opts.policy.assertUrl(url);
    const auth = basicAuth(url.username !== '' ? url : url.origin === start.origin ? start : null);
    let res: Dispatcher.ResponseData;
    try {
      res = await poolFor(url.origin).request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: opts.method,
        headers: { 'accept-encoding': 'identity', ...opts.headers, ...auth },
        signal: opts.signal ?? null,
      });
    } catch (err) {
      throw mapTransportError(err, opts.where, opts.signal);
    }
    const location = header(res.headers, 'location');
    if (!REDIRECTS.has(res.statusCode) || location === undefined) {
      return { status: res.statusCode, headers: res.headers, body: res.body, url };
    }
    await drain(res.body);
    if (hop >= opts.maxRedirects) {
      throw new FreeLoaderError(
        'SOURCE_ERROR',
        `${opts.where}: too many redirects (more than ${opts.maxRedirects}; redirect loop?)`,
      );
    }
    const next = new URL(location, url);
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new FreeLoaderError('SOURCE_ERROR', `${opts.where}: redirect to a non-HTTP URI`);
    }
    url = next;
  }
}

/** `Authorization: Basic` from a URI's user info, when it has any. */
export function basicAuth(url: URL | null): Headers {
  if (url === null || (url.username === '' && url.password === '')) return {};
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return { authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
}

/** Read and discard a small body so the connection goes back to the pool. */
export async function drain(body: Dispatcher.ResponseData['body']): Promise<void> {
  try {
    await body.dump({ limit: 64 * 1024 });
  } catch {
    // the connection is dropped instead; nothing to report
  }
}

/** Drop a body we will not read (closes its connection) without an unhandled 'error'. */
export function discard(body: {
  on(event: 'error', fn: () => void): unknown;
  destroy(): unknown;
}): void {
  body.on('error', () => {});
  body.destroy();
}

/** One response header as a string (the first when repeated). */
export function header(
  headers: Dispatcher.ResponseData['headers'],
  name: string,
): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A non-negative integer header (Content-Length), or null when absent or malformed. */
export function intHeader(
  headers: Dispatcher.ResponseData['headers'],
  name: string,
): number | null {
  const v = header(headers, name);
  return v !== undefined && /^\d+$/.test(v.trim()) ? Number(v.trim()) : null;
}

export interface ContentRange {
  /** First byte, inclusive; null for `bytes *\/size` (416 answers). */
  first: number | null;
  /** Last byte, inclusive. */
  last: number | null;
  /** Complete size; null when the server wrote `*`. */
  size: number | null;
}

/** Parse `Content-Range: bytes 0-99/1000` (or `bytes *\/1000`). */
export function contentRange(headers: Dispatcher.ResponseData['headers']): ContentRange | null {
  const v = header(headers, 'content-range');
  const m = v === undefined ? null : /^\s*bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)\s*$/i.exec(v);
  if (!m) return null;
  return {
    first: m[1] === undefined ? null : Number(m[1]),
    last: m[2] === undefined ? null : Number(m[2]),
    size: m[3] === '*' ? null : Number(m[3]),
  };
}
