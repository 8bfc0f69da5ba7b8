import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FreeLoaderError } from '@freeloader/protocol';
import { RangePool } from './range-pool.js';
import { rangeRead, UNSUITABLE } from './range-read.js';
import { startTestServer, type TestServerOptions } from './test-server.js';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const TIMEOUTS = { connectMs: 2000, headersMs: 2000, bodyIdleMs: 2000 };
const WHERE = 'http://test/data.bin';

function poolFor(url: string, max = 2, timeouts = TIMEOUTS): RangePool {
  const u = new URL(url);
  const pool = new RangePool(u.hostname, Number(u.port), max, timeouts, () => new Error('closed'));
  cleanup.push(() => pool.close());
  return pool;
}

async function testServer(opts: TestServerOptions = {}) {
  const srv = await startTestServer({ size: 200_000, ...opts });
  cleanup.push(() => srv.close());
  return { srv, path: new URL(srv.url).pathname, host: new URL(srv.url).host };
}

/** A raw TCP server answering each request with `answer(n)` (n counts requests overall). */
async function rawServer(answer: (n: number, socket: Socket) => void) {
  let requests = 0;
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      while (buf.includes('\r\n\r\n')) {
        buf = buf.slice(buf.indexOf('\r\n\r\n') + 4);
        answer(requests++, socket);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/x`,
    get requests() {
      return requests;
    },
    get connections() {
      return connections;
    },
  };
}

describe('rangeRead', () => {
  it('lands a 206 body in the buffer and keeps the connection for the next read', async () => {
    const { srv, path, host } = await testServer();
    const pool = poolFor(srv.url, 1);
    const into = Buffer.alloc(70_000);
    for (const [start, end] of [
      [0, 70_000],
      [1234, 5678],
      [130_000, 200_000],
    ] as const) {
      const r = await rangeRead(
        pool,
        path,
        host,
        { range: `bytes=${start}-${end - 1}` },
        into,
        WHERE,
      );
      expect(r).toMatchObject({ status: 206, bodyLength: end - start });
      expect(into.subarray(0, end - start).equals(srv.content.subarray(start, end))).toBe(true);
    }
    expect(srv.connections).toBe(1);
  });

  it.each<[string, TestServerOptions, object]>([
    ['an error status', { status: 404 }, { status: 404, bodyLength: 0 }],
    ['a redirect (left to the caller)', { redirect: 1 }, { status: 302, bodyLength: 0 }],
    ['a whole object larger than the buffer', { ranges: false }, { status: 200, bodyLength: 0 }],
  ])('%s comes back as a head without a body', async (_name, opts, want) => {
    const { srv, path, host } = await testServer(opts);
    const r = await rangeRead(
      poolFor(srv.url),
      path,
      host,
      { range: 'bytes=0-99' },
      Buffer.alloc(100),
      WHERE,
    );
    expect(r).toMatchObject(want);
  });

  it.each<[string, TestServerOptions, object, RegExp]>([
    ['short body', { truncateAt: 1000 }, TIMEOUTS, /short body, got 1000 of 5000 bytes/],
    ['silent headers', { delayMs: 1500 }, { ...TIMEOUTS, headersMs: 150 }, /response headers/],
    ['silent body', { stallAfter: 100 }, { ...TIMEOUTS, bodyIdleMs: 150 }, /body data/],
  ])('%s → a clear error', async (_name, opts, timeouts, message) => {
    const { srv, path, host } = await testServer(opts);
    const pool = poolFor(srv.url, 1, timeouts as typeof TIMEOUTS);
    const err = await rangeRead(
      pool,
      path,
      host,
      { range: 'bytes=0-4999' },
      Buffer.alloc(5000),
      WHERE,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FreeLoaderError);
    expect((err as Error).message).toMatch(message);
  });

  it('an unreachable server → SOURCE_UNREACHABLE', async () => {
    const raw = await rawServer(() => {});
    const url = raw.url;
    await cleanup.pop()!(); // close the server: its port now refuses
    const err = await rangeRead(poolFor(url), '/x', 'h', {}, Buffer.alloc(10), WHERE).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'SOURCE_UNREACHABLE' });
  });

  it('resends once when a kept-alive connection turns out closed by the server', async () => {
    const body = 'hello';
    const raw = await rawServer((n, socket) => {
      // The second request meets the race of a server closing an idle connection.
      if (n === 1) socket.destroy();
      else socket.write(`HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\n\r\n${body}`);
    });
    const pool = poolFor(raw.url, 1);
    const into = Buffer.alloc(5);
    for (let i = 0; i < 2; i++) {
      const r = await rangeRead(pool, '/x', 'h', { range: 'bytes=0-4' }, into, WHERE);
      expect(r).toMatchObject({ status: 206, bodyLength: 5 });
      expect(into.toString()).toBe(body);
    }
    expect(raw.requests).toBe(3);
    expect(raw.connections).toBe(2);
  });

  it('reads a head split across reads, even inside its blank line', async () => {
    const parts = ['HTTP/1.1 206 Partial Content\r\nContent-Le', 'ngth: 5\r\n\r', '\nhel', 'lo'];
    const raw = await rawServer((_n, socket) => {
      socket.setNoDelay(true);
      parts.forEach((p, i) => setTimeout(() => socket.write(p), i * 30));
    });
    const into = Buffer.alloc(5);
    const r = await rangeRead(poolFor(raw.url), '/x', 'h', {}, into, WHERE);
    expect(r).toMatchObject({ status: 206, bodyLength: 5 });
    expect(into.toString()).toBe('hello');
  });

  it('a chunked body is UNSUITABLE (the caller reads it another way)', async () => {
    const raw = await rawServer((_n, socket) =>
      socket.write(
        'HTTP/1.1 206 Partial Content\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
      ),
    );
    const r = await rangeRead(poolFor(raw.url), '/x', 'h', {}, Buffer.alloc(5), WHERE);
    expect(r).toBe(UNSUITABLE);
  });

  it('an abort mid-body rejects with its reason and frees the pool', async () => {
    const { srv, path, host } = await testServer({ bytesPerSecond: 20_000 });
    const pool = poolFor(srv.url, 1);
    const reason = new Error('stop');
    const ac = new AbortController();
    setTimeout(() => ac.abort(reason), 100);
    const read = rangeRead(
      pool,
      path,
      host,
      { range: 'bytes=0-99999' },
      Buffer.alloc(100_000),
      WHERE,
      ac.signal,
    );
    await expect(read).rejects.toBe(reason);
    srv.set({ bytesPerSecond: undefined });
    const again = await rangeRead(
      pool,
      path,
      host,
      { range: 'bytes=0-9' },
      Buffer.alloc(10),
      WHERE,
    );
    expect(again).toMatchObject({ status: 206, bodyLength: 10 });
  });

  it('waits for a free connection beyond the pool size', async () => {
    const { srv, path, host } = await testServer();
    const pool = poolFor(srv.url, 2);
    const reads = Array.from({ length: 8 }, (_, i) => {
      const into = Buffer.alloc(1000);
      return rangeRead(
        pool,
        path,
        host,
        { range: `bytes=${i * 1000}-${i * 1000 + 999}` },
        into,
        WHERE,
      ).then((r) => ({ r, into, i }));
    });
    for (const { r, into, i } of await Promise.all(reads)) {
      expect(r).toMatchObject({ status: 206, bodyLength: 1000 });
      expect(into.equals(srv.content.subarray(i * 1000, i * 1000 + 1000))).toBe(true);
    }
    expect(srv.connections).toBeLessThanOrEqual(2);
  });
});
