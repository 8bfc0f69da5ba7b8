import { afterEach, describe, expect, it } from 'vitest';
import { collect } from './exact-stream.js';
import { HttpSource } from './http-source.js';
import { SourcePolicy } from './source-policy.js';
import { LOOPBACK_SOURCES } from './test-policy.js';
import type { SourceInfo, SourceOptions } from './source.js';
import { startTestServer, type TestServerOptions } from './test-server.js';

/** The test servers listen on loopback: allowed here on purpose. */
const LOOPBACK = new SourcePolicy(LOOPBACK_SOURCES);

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

async function setup(server: TestServerOptions = {}, source: SourceOptions = {}) {
  const srv = await startTestServer(server);
  const src = new HttpSource(new URL(srv.url), { policy: LOOPBACK, ...source });
  cleanup.push(
    () => src.close(),
    () => srv.close(),
  );
  return { srv, src };
}

const SIZE = 300_007;

describe('HttpSource.probe', () => {
  it.each<{
    name: string;
    server: TestServerOptions;
    ranges: boolean;
    etag: boolean;
    requests: number;
  }>([
    { name: 'HEAD with Accept-Ranges', server: {}, ranges: true, etag: true, requests: 1 },
    { name: 'no ETag', server: { etag: false }, ranges: true, etag: false, requests: 1 },
    { name: 'no range support', server: { ranges: false }, ranges: false, etag: true, requests: 2 },
    {
      name: 'HEAD refused → GET bytes=0-0',
      server: { head: false },
      ranges: true,
      etag: true,
      requests: 2,
    },
    {
      name: 'HEAD refused, no ranges',
      server: { head: false, ranges: false },
      ranges: false,
      etag: true,
      requests: 2,
    },
  ])('$name', async ({ server, ranges, etag, requests }) => {
    const { srv, src } = await setup({ size: SIZE, ...server });
    const info = await src.probe();
    expect(info).toEqual({
      uri: srv.url,
      size: SIZE,
      etag: etag ? srv.etag : null,
      lastModified: expect.stringMatching(/GMT$/),
      acceptsRanges: ranges,
    });
    expect(srv.requests).toBe(requests);
  });

  it('probes an empty object', async () => {
    const { src } = await setup({ size: 0 });
    expect(await src.probe()).toMatchObject({ size: 0, acceptsRanges: true });
  });

  it('probes through redirects', async () => {
    const { srv, src } = await setup({ size: SIZE, redirect: 3 });
    expect((await src.probe()).size).toBe(SIZE);
    expect(srv.seen.map((r) => r.path)).toEqual(['/data.bin', '/hop/1', '/hop/2', '/hop/3']);
  });
});

describe('HttpSource.readRange', () => {
  it.each([
    [0, 1],
    [0, 4096],
    [1000, 70_000],
    [65_535, 65_537],
    [SIZE - 1, SIZE],
    [SIZE - 100, SIZE],
    [0, SIZE],
  ])('bytes [%i, %i) exactly', async (start, end) => {
    const { srv, src } = await setup({ size: SIZE });
    const info = await src.probe();
    const got = await src.readRange(start, end, info);
    expect(got.length).toBe(end - start);
    expect(got.equals(srv.content.subarray(start, end))).toBe(true);
    const sent = srv.seen.at(-1)!.headers;
    expect(sent).toMatchObject({ range: `bytes=${start}-${end - 1}`, 'if-match': srv.etag });
    const into = Buffer.alloc(end - start + 3);
    const landed = await src.readRange(start, end, info, undefined, into);
    expect(landed.buffer).toBe(into.buffer);
    expect(landed.equals(srv.content.subarray(start, end))).toBe(true);
  });

  it('refuses a buffer too small for the range', async () => {
    const { src } = await setup({ size: SIZE });
    const info = await src.probe();
    await expect(src.readRange(0, 100, info, undefined, Buffer.alloc(99))).rejects.toThrow(
      /cannot hold/,
    );
  });

  it('an empty range costs no request', async () => {
    const { srv, src } = await setup({ size: SIZE });
    const info = await src.probe();
    expect((await src.readRange(7, 7, info)).length).toBe(0);
    expect(srv.requests).toBe(1);
  });

  it.each([
    [-1, 5],
    [5, 4],
    [0, SIZE + 1],
    [0.5, 2],
  ])('rejects range [%d, %d) before sending', async (start, end) => {
    const { srv, src } = await setup({ size: SIZE });
    const info = await src.probe();
    await expect(src.readRange(start, end, info)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect(srv.requests).toBe(1);
  });

  it('uses Last-Modified as the validator when there is no ETag', async () => {
    const { srv, src } = await setup({ size: SIZE, etag: false });
    const info = await src.probe();
    await src.readRange(10, 20, info);
    expect(srv.seen.at(-1)!.headers).toMatchObject({
      'if-range': info.lastModified,
      'if-unmodified-since': info.lastModified,
    });
  });

  it('streams a large range', async () => {
    const { srv, src } = await setup({ size: SIZE });
    const info = await src.probe();
    const stream = await src.streamRange(100, SIZE, info);
    expect((await collect(stream, SIZE - 100)).equals(srv.content.subarray(100))).toBe(true);
  });

  it('reuses keep-alive connections for many reads', async () => {
    const { srv, src } = await setup({ size: SIZE }, { connections: 4 });
    const info = await src.probe(); // undici closes the socket after a HEAD
    for (let i = 0; i < 30; i++) await src.readRange(i * 1000, i * 1000 + 500, info);
    await Promise.all(
      Array.from({ length: 16 }, (_, i) => src.readRange(i * 4096, i * 4096 + 4096, info)),
    );
    expect(srv.requests).toBe(47);
    expect(srv.connections).toBeLessThanOrEqual(1 + 4);
  });
});

describe('HttpSource change detection', () => {
  it.each<{ name: string; server: TestServerOptions; status: number }>([
    { name: 'If-Match → 412', server: {}, status: 412 },
    { name: 'If-Unmodified-Since → 412', server: { etag: false }, status: 412 },
    { name: 'If-Range → 200 whole object', server: { ifMatch: false }, status: 200 },
    {
      name: 'preconditions ignored, new ETag seen',
      server: { ifMatch: false, ifRange: false },
      status: 206,
    },
    {
      name: 'preconditions ignored, new Last-Modified seen',
      server: { ifMatch: false, ifRange: false, etag: false },
      status: 206,
    },
  ])('changed between probe and read: $name', async ({ server, status }) => {
    const { srv, src } = await setup({ size: SIZE, changeAfter: 1, ...server });
    const info = await src.probe();
    const err = await src.readRange(0, 1000, info).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SOURCE_CHANGED', message: /source changed during import/ });
    expect(srv.seen.map((r) => r.status)).toEqual([200, status]);
  });

  it('a shrunken object without validators is caught by size', async () => {
    const { srv, src } = await setup({ size: SIZE, etag: false, lastModified: false });
    const info = await src.probe();
    srv.setContent(srv.content.subarray(0, 1000));
    await expect(src.readRange(0, 10, info)).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
    await expect(src.readRange(5000, 6000, info)).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
  });

  it('readAll refuses a changed object', async () => {
    const { src } = await setup({ size: SIZE, changeAfter: 1 });
    const info = await src.probe();
    await expect(src.readAll(info)).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
  });
});

// Decision: a 200 answering a ranged read is SOURCE_CHANGED when a validator was sent
// (If-Range asked for the whole object only if it changed) and RANGE_NOT_SUPPORTED when none
// was (the server ignores Range); the caller then reads with readAll on purpose.
describe('HttpSource without range support', () => {
  const forced = (info: SourceInfo) => ({ ...info, acceptsRanges: true });

  it.each<{
    name: string;
    server: TestServerOptions;
    expectInfo: (i: SourceInfo) => SourceInfo;
    code: string;
  }>([
    {
      name: 'probe said no ranges',
      server: { ranges: false },
      expectInfo: (i) => i,
      code: 'RANGE_NOT_SUPPORTED',
    },
    {
      name: '200 with a validator sent',
      server: { ranges: false },
      expectInfo: forced,
      code: 'SOURCE_CHANGED',
    },
    {
      name: '200 with nothing to validate',
      server: { ranges: false, etag: false, lastModified: false },
      expectInfo: forced,
      code: 'RANGE_NOT_SUPPORTED',
    },
  ])('$name → $code', async ({ server, expectInfo, code }) => {
    const { src } = await setup({ size: SIZE, ...server });
    const info = expectInfo(await src.probe());
    await expect(src.readRange(10, 20, info)).rejects.toMatchObject({ code });
  });

  it('readAll streams the whole object', async () => {
    const { srv, src } = await setup({ size: SIZE, ranges: false });
    const info = await src.probe();
    expect((await collect(await src.readAll(info), SIZE)).equals(srv.content)).toBe(true);
  });

  it('a 200 for the whole object is accepted as the range', async () => {
    const { srv, src } = await setup({ size: SIZE, ranges: false });
    const info = forced(await src.probe());
    expect((await src.readRange(0, SIZE, info)).equals(srv.content)).toBe(true);
  });
});
