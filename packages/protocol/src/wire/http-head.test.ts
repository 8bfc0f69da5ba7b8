import { describe, expect, it } from 'vitest';
import { HeadReader, parseResponseHead } from './http-head.js';

describe('parseResponseHead', () => {
  it.each([
    [
      'HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\nETag: "a"',
      { status: 206, contentLength: 5, framed: false, close: false },
    ],
    [
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked',
      { status: 200, contentLength: null, framed: true },
    ],
    ['HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1', { close: true }],
    ['HTTP/1.0 200 OK\r\nContent-Length: 1', { close: true }],
    ['HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1', { close: false }],
    ['HTTP/1.1 404 Not Found\r\nContent-Length: x12', { status: 404, contentLength: null }],
  ])('%j', (text, want) => {
    expect(parseResponseHead(text)).toMatchObject(want);
  });

  it('keeps repeated headers as arrays and lower-cases names', () => {
    const head = parseResponseHead('HTTP/1.1 200 OK\r\nSet-Cookie: a\r\nset-cookie: b\r\nX-Y: z');
    expect(head?.headers).toEqual({ 'set-cookie': ['a', 'b'], 'x-y': 'z' });
  });

  it.each(['', 'ICY 200 OK', 'HTTP/2 200', 'HTTP/1.1 2000 OK'])('%j is not a head', (text) => {
    expect(parseResponseHead(text)).toBeNull();
  });
});

describe('HeadReader', () => {
  const RESPONSE = 'HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\n\r\nhello';

  it.each([
    ['whole', [RESPONSE.length]],
    ['split in the status line', [7]],
    ['split inside the blank line', [RESPONSE.indexOf('\r\n\r\n') + 1]],
    ['split after CR LF CR', [RESPONSE.indexOf('\r\n\r\n') + 3]],
    ['one byte at a time', Array.from({ length: RESPONSE.length }, (_, i) => i + 1)],
  ])('finds the head %s', (_name, cuts) => {
    const bytes = Buffer.from(RESPONSE);
    const reader = new HeadReader(1024);
    let at = 0;
    let result: ReturnType<HeadReader['feed']>;
    for (const cut of [...cuts, bytes.length]) {
      if (cut <= at) continue;
      // A reused read buffer: overwrite it after each feed, as a socket would.
      const read = Buffer.from(bytes.subarray(at, cut));
      result = reader.feed(read);
      at = cut;
      if (result !== undefined) {
        expect(result).not.toBe('oversized');
        const { text, rest } = result as { text: string; rest: Buffer };
        expect(text).toBe('HTTP/1.1 206 Partial Content\r\nContent-Length: 5');
        expect(Buffer.concat([rest, bytes.subarray(at)]).toString()).toBe('hello');
        read.fill(0);
        return;
      }
      read.fill(0);
    }
    throw new Error('head never completed');
  });

  it('says oversized past its limit', () => {
    const reader = new HeadReader(10);
    expect(reader.feed(Buffer.from('HTTP/1.1 20'))).toBe('oversized');
  });
});
