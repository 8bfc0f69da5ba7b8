import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { generateContent } from './test-content.js';
import { startTestServer, type TestServer } from './test-server.js';

let srv: TestServer | undefined;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { headers });
  return {
    status: res.statusCode,
    headers: res.headers,
    body: Buffer.from(await res.body.arrayBuffer()),
  };
}

/** Poll `ok` every 10 ms until it holds (the test's own timeout bounds the wait). */
async function waitUntil(ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((r) => setTimeout(r, 10));
}

describe('startTestServer', () => {
  it('serves deterministic content', async () => {
    srv = await startTestServer({ size: 1000, seed: 9 });
    const res = await get(srv.url);
    expect(res.status).toBe(200);
    expect(res.body.equals(generateContent(1000, 9))).toBe(true);
    expect(generateContent(1000, 9).equals(generateContent(1000, 10))).toBe(false);
  });

  it.each([
    ['bytes=10-19', 206, 'bytes 10-19/1000', [10, 20]],
    ['bytes=990-', 206, 'bytes 990-999/1000', [990, 1000]],
    ['bytes=-5', 206, 'bytes 995-999/1000', [995, 1000]],
    ['bytes=1000-', 416, 'bytes */1000', [0, 0]],
    ['items=1-2', 200, undefined, [0, 1000]],
  ] as const)('Range %s → %i', async (range, status, contentRange, [a, b]) => {
    srv = await startTestServer({ size: 1000 });
    const res = await get(srv.url, { range });
    expect(res.status).toBe(status);
    expect(res.headers['content-range']).toBe(contentRange);
    expect(res.body.equals(srv.content.subarray(a, b))).toBe(true);
  });

  it('changes content and ETag after N requests', async () => {
    srv = await startTestServer({ size: 100, changeAfter: 2 });
    const etags = [];
    for (let i = 0; i < 4; i++) etags.push((await get(srv.url)).headers.etag);
    expect(etags[0]).toBe(etags[1]);
    expect(etags[2]).not.toBe(etags[1]);
    expect(etags[3]).toBe(etags[2]);
  });

  it('rate-limits bodies', async () => {
    srv = await startTestServer({ size: 20_000, bytesPerSecond: 80_000 });
    const started = performance.now();
    expect((await get(srv.url)).body.length).toBe(20_000);
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
  });

  it.each([
    ['a whole body', undefined, 0],
    ['a range that starts past the hold', 'bytes=3000-4999', 3000],
  ] as const)(
    'holds %s past holdFrom until released, trickling meanwhile',
    async (_, range, from) => {
      srv = await startTestServer({ size: 5000, seed: 3, holdFrom: 3500 });
      const res = await request(srv.url, { headers: range ? { range } : {} });
      const got: Buffer[] = [];
      let received = 0;
      const done = (async () => {
        for await (const chunk of res.body) {
          got.push(chunk as Buffer);
          received += (chunk as Buffer).length;
        }
      })();
      // Everything before the hold, then a trickle: two held bytes arrive, the rest does not.
      await waitUntil(() => received >= 3500 - from + 2);
      expect(received).toBeLessThan(5000 - from);
      srv.set({ holdFrom: undefined });
      await done;
      expect(Buffer.concat(got).equals(generateContent(5000, 3).subarray(from))).toBe(true);
    },
  );

  it('counts requests and connections', async () => {
    srv = await startTestServer({ size: 10 });
    await get(srv.url);
    await get(srv.url);
    expect(srv.requests).toBe(2);
    expect(srv.connections).toBeGreaterThanOrEqual(1);
    expect(srv.seen.map((r) => r.status)).toEqual([200, 200]);
  });
});
