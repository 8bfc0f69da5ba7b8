import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FreeLoaderError } from '@freeloader/protocol';
import { collect } from './exact-stream.js';
import { opensslReason } from './http-errors.js';
import { HttpSource } from './http-source.js';
import { SourcePolicy } from './source-policy.js';
import { LOOPBACK_SOURCES } from './test-policy.js';
import type { SourceOptions } from './source.js';
import { selfSignedCert } from './test-content.js';
import { startTestServer, type TestServerOptions } from './test-server.js';

/** The test servers listen on loopback: allowed here on purpose. */
const LOOPBACK = new SourcePolicy(LOOPBACK_SOURCES);

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

async function setup(server: TestServerOptions = {}, source: SourceOptions = {}, url?: string) {
  const srv = await startTestServer({ size: 100_000, ...server });
  const src = new HttpSource(new URL(url ?? srv.url), { policy: LOOPBACK, ...source });
  cleanup.push(
    () => src.close(),
    () => srv.close(),
  );
  return { srv, src };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('HttpSource failures', () => {
  it.each([
    [404, /not found \(404\)/, false],
    [410, /not found \(410\)/, false],
    [401, /access denied \(401\)/, false],
    [403, /access denied \(403\)/, false],
    [500, /HTTP 500/, true],
    [503, /HTTP 503/, true],
  ])('status %i → SOURCE_ERROR %s', async (status, message, retryable) => {
    const { src } = await setup({ status });
    const err = await src.probe().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SOURCE_ERROR', message, details: { status, retryable } });
  });

  it('a status during a read fails the read the same way', async () => {
    const { srv, src } = await setup();
    const info = await src.probe();
    srv.set({ status: 403 });
    await expect(src.readRange(0, 10, info)).rejects.toThrow(/access denied \(403\)/);
  });

  it('unreachable port → SOURCE_UNREACHABLE', async () => {
    const port = await closedPort();
    const src = new HttpSource(new URL(`http://127.0.0.1:${port}/x`), { policy: LOOPBACK });
    cleanup.push(() => src.close());
    await expect(src.probe()).rejects.toMatchObject({
      code: 'SOURCE_UNREACHABLE',
      message: /unreachable \(ECONNREFUSED\)/,
    });
  });

  it.each([
    ['loop', /too many redirects \(more than 5; redirect loop\?\)/, 6],
    [6, /too many redirects/, 6],
  ] as const)('redirect %s → SOURCE_ERROR', async (redirect, message, requests) => {
    const { srv, src } = await setup({ redirect });
    await expect(src.probe()).rejects.toMatchObject({ code: 'SOURCE_ERROR', message });
    expect(srv.requests).toBe(requests);
  });

  it('follows redirects within the limit for reads too', async () => {
    const { srv, src } = await setup({ redirect: 5 });
    const info = await src.probe();
    expect((await src.readRange(5, 50, info)).equals(srv.content.subarray(5, 50))).toBe(true);
  });

  it('many reads at once through a redirect all come back whole', async () => {
    const { srv, src } = await setup({ redirect: 1 }, { connections: 2 });
    const info = await src.probe();
    const ranges = Array.from({ length: 6 }, (_, i) => [i * 100, i * 100 + 50] as const);
    const got = await Promise.all(ranges.map(([a, b]) => src.readRange(a, b, info)));
    got.forEach((buf, i) => {
      const [a, b] = ranges[i]!;
      expect(buf.equals(srv.content.subarray(a, b))).toBe(true);
    });
  });

  it.each<[string, TestServerOptions, SourceOptions, RegExp]>([
    // undici's header/body timers tick about every 0.5 s, so the server stalls well past that.
    ['headers', { delayMs: 3000 }, { headersTimeoutMs: 200 }, /waiting for response headers/],
    ['body idle', { stallAfter: 100 }, { bodyIdleTimeoutMs: 200 }, /waiting for body data/],
  ])('%s timeout → TIMEOUT', async (_name, server, source, message) => {
    const { srv, src } = await setup(server, source);
    const info = {
      uri: srv.url,
      size: 100_000,
      etag: srv.etag,
      lastModified: null,
      acceptsRanges: true,
    };
    await expect(src.readRange(0, 2000, info)).rejects.toMatchObject({ code: 'TIMEOUT', message });
  });

  it('a body that ends short → SOURCE_ERROR', async () => {
    const { srv, src } = await setup();
    const info = await src.probe();
    srv.set({ truncateAt: 1000 });
    await expect(src.readRange(0, 5000, info)).rejects.toMatchObject({ code: 'SOURCE_ERROR' });
    const stream = await src.streamRange(0, 5000, info);
    await expect(collect(stream, 5000)).rejects.toMatchObject({ code: 'SOURCE_ERROR' });
    const whole = await src.readAll(info);
    await expect(collect(whole, info.size)).rejects.toMatchObject({ code: 'SOURCE_ERROR' });
  });

  it('an aborted signal rejects with its reason', async () => {
    const { srv, src } = await setup({ delayMs: 200 });
    const info = {
      uri: srv.url,
      size: 100_000,
      etag: srv.etag,
      lastModified: null,
      acceptsRanges: true,
    };
    const reason = new Error('user cancelled');
    const ac = new AbortController();
    setTimeout(() => ac.abort(reason), 20);
    await expect(src.readRange(0, 10, info, ac.signal)).rejects.toBe(reason);
  });

  it('a closed source refuses new reads', async () => {
    const { src } = await setup();
    const info = await src.probe();
    await src.close();
    await expect(src.readRange(0, 10, info)).rejects.toThrow(/source is closed/);
  });

  it('sends URI credentials as Basic auth but never shows them', async () => {
    const { srv } = await setup();
    const withCreds = new URL(srv.url);
    withCreds.username = 'bob';
    withCreds.password = 's3cret';
    const authed = new HttpSource(withCreds, { policy: LOOPBACK });
    cleanup.push(() => authed.close());
    await authed.probe();
    const basic = `Basic ${Buffer.from('bob:s3cret').toString('base64')}`;
    expect(srv.seen.at(-1)!.headers.authorization).toBe(basic);
    srv.set({ status: 403 });
    const err = (await authed.probe().catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('bob:***@');
    expect(err.message).not.toContain('s3cret');
  });
});

describe('https:// to a plain-HTTP port', () => {
  it('fails in one line that says the server did not answer TLS', async () => {
    const srv = await startTestServer({ size: 1000 });
    const url = new URL(srv.url);
    url.protocol = 'https:';
    const src = new HttpSource(url, { policy: LOOPBACK });
    cleanup.push(
      () => src.close(),
      () => srv.close(),
    );
    const err = (await src.probe().catch((e: unknown) => e)) as FreeLoaderError;
    expect(err).toMatchObject({
      code: 'SOURCE_ERROR',
      message: `${url.href}: the server did not answer TLS (is it plain http://?) (ERR_SSL_WRONG_VERSION_NUMBER)`,
      details: { code: 'ERR_SSL_WRONG_VERSION_NUMBER' },
    });
  });
});

describe('opensslReason', () => {
  it.each([
    [
      '803CCA37B17F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n',
      'wrong version number',
    ],
    ['self-signed certificate', 'self-signed certificate'],
    ['two\nlines ', 'two lines'],
  ])('%j → %j', (message, reason) => expect(opensslReason(message)).toBe(reason));
});

describe.skipIf(selfSignedCert() === null)('HttpSource over TLS', () => {
  it('a self-signed certificate → SOURCE_ERROR "TLS:"', async () => {
    const { src } = await setup({ tls: true });
    await expect(src.probe()).rejects.toMatchObject({
      code: 'SOURCE_ERROR',
      message: /TLS: self[- ]signed certificate/,
    });
  });

  it('reads once the certificate is trusted via `ca`', async () => {
    const srv = await startTestServer({ size: 100_000, tls: true });
    const src = new HttpSource(new URL(srv.url), { ca: srv.cert!, policy: LOOPBACK });
    cleanup.push(
      () => src.close(),
      () => srv.close(),
    );
    const info = await src.probe();
    expect((await src.readRange(10, 999, info)).equals(srv.content.subarray(10, 999))).toBe(true);
  });
});
