import { describe, expect, it } from 'vitest';
import { MAX_MORSELS_PER_DATASET } from '../limits.js';
import { MORSEL_HASH_HEADER } from './headers.js';
import { morselResponseHead, parseMorselGet } from './lean-morsel-get.js';

describe('parseMorselGet', () => {
  const uuid = '0d9c0a52-3f0e-4c1e-9d55-8a1f2c3b4d5e';
  it.each([
    [`GET /v1/morsels/${uuid}/7 HTTP/1.1\r\nHost: d\r\nAuthorization: Bearer x`, 7, 'Bearer x'],
    [`GET /v1/morsels/${uuid}/0 HTTP/1.1\r\nhost: d\r\nconnection: Keep-Alive`, 0, undefined],
  ])('takes a plain GET %#', (head, index, authorization) => {
    expect(parseMorselGet(head)).toEqual({ dataset: uuid, index, authorization });
  });

  it.each([
    ['HEAD', `HEAD /v1/morsels/${uuid}/7 HTTP/1.1\r\nHost: d`],
    ['a query', `GET /v1/morsels/${uuid}/7?cap=x HTTP/1.1\r\nHost: d`],
    ['HTTP/1.0', `GET /v1/morsels/${uuid}/7 HTTP/1.0\r\nHost: d`],
    ['no Host', `GET /v1/morsels/${uuid}/7 HTTP/1.1\r\nAuthorization: Bearer x`],
    ['a body', `GET /v1/morsels/${uuid}/7 HTTP/1.1\r\nHost: d\r\nContent-Length: 3`],
    ['chunked', `GET /v1/morsels/${uuid}/7 HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: chunked`],
    ['close', `GET /v1/morsels/${uuid}/7 HTTP/1.1\r\nHost: d\r\nConnection: close`],
    [
      'two Authorization',
      `GET /v1/morsels/${uuid}/7 HTTP/1.1\r\nHost: d\r\nAuthorization: a\r\nauthorization: b`,
    ],
    ['a leading zero', `GET /v1/morsels/${uuid}/07 HTTP/1.1\r\nHost: d`],
    [
      'an index past the limit',
      `GET /v1/morsels/${uuid}/${MAX_MORSELS_PER_DATASET} HTTP/1.1\r\nHost: d`,
    ],
    ['an upper-case id', `GET /v1/morsels/${uuid.toUpperCase()}/7 HTTP/1.1\r\nHost: d`],
    ['the batch route', `GET /v1/morsels/${uuid} HTTP/1.1\r\nHost: d`],
    ['a line without a colon', `GET /v1/morsels/${uuid}/7 HTTP/1.1\r\nHost: d\r\nbroken`],
  ])('leaves %s to node:http', (_what, head) => {
    expect(parseMorselGet(head)).toBeUndefined();
  });
});

describe('morselResponseHead', () => {
  it('is a complete keep-alive 200 head with the length and the hash', () => {
    const head = morselResponseHead(5, 'ab'.repeat(32), 'Thu, 01 Jan 2026 00:00:00 GMT');
    expect(head.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(head.endsWith('\r\n\r\n')).toBe(true);
    expect(head).toContain('content-length: 5\r\n');
    expect(head).toContain(`${MORSEL_HASH_HEADER}: ${'ab'.repeat(32)}\r\n`);
    expect(head).toContain('connection: keep-alive\r\n');
  });
});
