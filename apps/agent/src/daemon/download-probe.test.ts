import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { timedDownload } from './download-probe.js';

let server: Server | undefined;
afterEach(async () => {
  const s = server;
  server = undefined;
  if (!s) return;
  s.closeAllConnections();
  await new Promise((r) => s.close(r));
});

/** A real HTTP server answering `status` and, for 200, `totalBytes` in 64 KiB writes. */
async function serve(status: number, totalBytes: number): Promise<URL> {
  const block = Buffer.alloc(64 * 1024, 7);
  server = createServer((req, res) => {
    if (req.headers.authorization !== 'Bearer t') res.writeHead(401).end();
    else if (status !== 200) res.writeHead(status).end('no');
    else {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      let left = totalBytes;
      const pump = () => {
        while (left > 0) {
          const n = Math.min(left, block.length);
          left -= n;
          if (!res.write(block.subarray(0, n))) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    }
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return new URL(`http://127.0.0.1:${port}/probe?bytes=1`);
}

describe('timedDownload', () => {
  it('counts a body the server ends before time is up', async () => {
    const url = await serve(200, 8 * 1024 * 1024);
    const { bytes, seconds } = await timedDownload(url, { authorization: 'Bearer t' }, 10_000);
    // The first read only starts the clock; chunked framing adds a few bytes per write.
    expect(bytes).toBeGreaterThan(7 * 1024 * 1024);
    expect(bytes).toBeLessThan(8.1 * 1024 * 1024);
    expect(seconds).toBeGreaterThan(0);
  });

  it('stops at the time limit on an endless body', async () => {
    const url = await serve(200, Number.MAX_SAFE_INTEGER);
    const started = performance.now();
    const { bytes } = await timedDownload(url, { authorization: 'Bearer t' }, 300);
    expect(bytes).toBeGreaterThan(0);
    // Far below the endless body's forever; generous for a machine at load average 10+.
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it.each([
    [404, 'Bearer t'],
    [200, 'Bearer wrong'],
  ])('a %i answer (authorization %s) is an error', async (status, authorization) => {
    const url = await serve(status, 100);
    await expect(timedDownload(url, { authorization }, 2000)).rejects.toThrow(/HTTP 40[14]/);
  });

  it('an abort rejects with its reason', async () => {
    const url = await serve(200, Number.MAX_SAFE_INTEGER);
    const ac = new AbortController();
    const reason = new Error('agent stopping');
    setTimeout(() => ac.abort(reason), 50);
    await expect(timedDownload(url, { authorization: 'Bearer t' }, 10_000, ac.signal)).rejects.toBe(
      reason,
    );
  });

  it('refuses https (fetch measures those)', async () => {
    await expect(timedDownload(new URL('https://127.0.0.1:1/'), {}, 100)).rejects.toThrow(
      /http only/,
    );
  });
});
