import { MORSEL_CONTENT_TYPE, MORSEL_HASH_HEADER } from './headers.js';
import { parseMorselPath } from './morsel-paths.js';

/** Headers that change how a request must be handled: any of them sends it to node:http. */
const SPECIAL_HEADER = /^(content-length|transfer-encoding|expect|upgrade)$/i;
const REQUEST_LINE = /^GET (\S+) HTTP\/1\.1$/;

/**
 * The dataset, index and authorization of a plain keep-alive morsel GET head (the request line
 * and header lines, without the blank line), else undefined: the donor's lean path answers only
 * these and leaves everything else to the full service.
 *
 * @example
 *   parseMorselGet('GET /v1/morsels/<uuid>/7 HTTP/1.1\r\nHost: d\r\nAuthorization: Bearer x')
 *   // → { dataset: '<uuid>', index: 7, authorization: 'Bearer x' }
 */
export function parseMorselGet(
  head: string,
): { dataset: string; index: number; authorization: string | undefined } | undefined {
  const lines = head.split('\r\n');
  const line = REQUEST_LINE.exec(lines[0]!);
  const target = line && parseMorselPath(line[1]!);
  if (!target) return undefined;
  let authorization: string | undefined;
  let host = false;
  for (let i = 1; i < lines.length; i++) {
    const header = lines[i]!;
    const colon = header.indexOf(':');
    if (colon <= 0) return undefined;
    const name = header.slice(0, colon);
    if (SPECIAL_HEADER.test(name)) return undefined;
    const lower = name.toLowerCase();
    if (lower === 'authorization') {
      if (authorization !== undefined) return undefined;
      authorization = header.slice(colon + 1).trim();
    } else if (lower === 'host') {
      host = true;
    } else if (lower === 'connection' && !/^\s*keep-alive\s*$/i.test(header.slice(colon + 1))) {
      return undefined;
    }
  }
  // node:http answers a head without Host 400, as HTTP/1.1 asks.
  return host ? { dataset: target.datasetId, index: target.index, authorization } : undefined;
}

/**
 * The head of the lean path's 200 answer to a morsel GET (the same headers the full service
 * sends), ending in the blank line; the morsel's bytes follow it.
 */
export function morselResponseHead(length: number, sha256: string, date: string): string {
  return (
    `HTTP/1.1 200 OK\r\ndate: ${date}\r\ncontent-type: ${MORSEL_CONTENT_TYPE}\r\n` +
    `content-length: ${length}\r\n${MORSEL_HASH_HEADER}: ${sha256}\r\n` +
    'cache-control: no-store\r\nconnection: keep-alive\r\n\r\n'
  );
}
