import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { ManagerClient, normalizeManagerUrl } from './manager-client.js';
import { freePort } from './test/processes.js';

// The client's failover round a manager list, against real HTTP servers on loopback: one that
// answers like a manager whose database is away (503), one that cuts connections mid-request,
// and one that answers.
const servers: Server[] = [];
const clients: ManagerClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function serve(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => handle(req, res));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, hits };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const answering = () => serve((_req, res) => json(res, 200, { ok: true }));
const unavailable = () =>
  serve((_req, res) =>
    json(res, 503, { error: { code: 'UNAVAILABLE', message: 'database unavailable' } }),
  );
const cutting = () => serve((req) => req.socket.destroy());

function client(urls: string[]): ManagerClient {
  const c = new ManagerClient(urls.join(','));
  clients.push(c);
  return c;
}

describe('ManagerClient with several managers', () => {
  it('moves on from an unreachable manager and stays with the one that answered', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const live = await answering();
    const c = client([dead, live.url]);
    expect(c.baseUrl).toBe(dead);
    expect(await c.request('GET', '/health')).toEqual({ ok: true });
    expect(c.baseUrl).toBe(live.url);
    // A write too: connection refused means nothing was sent.
    expect(await c.request('POST', '/jobs/claim', {})).toEqual({ ok: true });
    expect(live.hits).toEqual(['GET /api/v1/health', 'POST /api/v1/jobs/claim']);
    expect(c.managerUrls).toBe(`${dead},${live.url}`);
  });

  it('moves on from a manager answering 503, reads and writes alike', async () => {
    const away = await unavailable();
    const live = await answering();
    const c = client([away.url, live.url]);
    expect(await c.request('POST', '/agents/heartbeat', {})).toEqual({ ok: true });
    expect(away.hits).toEqual(['POST /api/v1/agents/heartbeat']);
    expect(live.hits).toEqual(['POST /api/v1/agents/heartbeat']);
  });

  it('does not repeat a write that may have reached a manager; repeats a read', async () => {
    const cut = await cutting();
    const live = await answering();
    const writes = client([cut.url, live.url]);
    await expect(writes.request('POST', '/jobs/j1/finish', {})).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    expect(live.hits).toEqual([]);
    const reads = client([cut.url, live.url]);
    expect(await reads.request('GET', '/datasets')).toEqual({ ok: true });
    expect(live.hits).toEqual(['GET /api/v1/datasets']);
  });

  it('fails with the last error once every manager was tried', async () => {
    const a = await unavailable();
    const b = await unavailable();
    const c = client([a.url, b.url]);
    await expect(c.request('GET', '/health')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect([a.hits.length, b.hits.length]).toEqual([1, 1]);
  });

  it('normalizes each URL of a list and refuses an empty entry', () => {
    expect(normalizeManagerUrl('m1:7400, https://m2/')).toBe('http://m1:7400,https://m2');
    expect(() => normalizeManagerUrl('m1:7400,,m2')).toThrow(/empty entry/);
  });
});
