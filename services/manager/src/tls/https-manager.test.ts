import { readFile, mkdtemp, rm, stat } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caFingerprint, HEARTBEAT_INTERVAL_MS } from '@freeloader/protocol';
import { startManager, type RunningManager } from '../start.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { tlsDir } from './tls-material.js';

/** One HTTPS request trusting only `ca` (or the system's roots when unset). */
function httpsCall(
  url: string,
  opts: { ca?: string; method?: string; body?: unknown; token?: string } = {},
): Promise<{ status: number; body: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: opts.method ?? 'GET',
        ...(opts.ca ? { ca: opts.ca } : {}),
        headers: {
          ...(opts.body ? { 'content-type': 'application/json' } : {}),
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(opts.body ? JSON.stringify(opts.body) : undefined);
  });
}

let db: TestDatabase;
let home: string;
let manager: RunningManager;
const overrides = () => ({
  home,
  databaseUrl: db.url,
  host: '127.0.0.1',
  port: 0,
  tls: 'on' as const,
  logLevel: 'silent' as const,
});

beforeAll(async () => {
  db = await createTestDatabase();
  home = await mkdtemp(join(tmpdir(), 'fl-tls-home-'));
  manager = await startManager(overrides());
}, 120_000);
afterAll(async () => {
  await manager?.close();
  await db?.drop();
  await rm(home, { recursive: true, force: true });
});

describe('a manager with TLS on', () => {
  it('creates its CA and certificate at first start, keys 0600, and serves HTTPS with them', async () => {
    expect(manager.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const dir = tlsDir(home);
    for (const key of ['ca-key.pem', 'server-key.pem']) {
      expect((await stat(join(dir, key))).mode & 0o777).toBe(0o600);
    }
    const caPem = await readFile(join(dir, 'ca.pem'), 'utf8');
    expect(manager.caFingerprint).toBe(caFingerprint(caPem));
    const health = await httpsCall(`${manager.url}/api/v1/health`, { ca: caPem });
    expect(health.status).toBe(200);
    const ca = JSON.parse((await httpsCall(`${manager.url}/api/v1/tls/ca`, { ca: caPem })).body);
    expect(ca).toEqual({ fingerprint: manager.caFingerprint, caPem, https: true });
  });

  it('keeps an idle connection open well past a heartbeat interval (Keep-Alive hint)', async () => {
    const caPem = await readFile(join(tlsDir(home), 'ca.pem'), 'utf8');
    const { headers } = await httpsCall(`${manager.url}/api/v1/health`, { ca: caPem });
    // undici closes a pooled connection 1 s before the hinted timeout: with Node's 5 s default
    // an agent heartbeating every 5 s opened a new TLS connection for every heartbeat.
    const hinted = Number(/timeout=(\d+)/.exec(String(headers['keep-alive'] ?? ''))?.[1]) * 1000;
    expect(hinted).toBeGreaterThanOrEqual(2 * HEARTBEAT_INTERVAL_MS);
  });

  it('is not trusted by a client that does not pin its CA', async () => {
    await expect(httpsCall(`${manager.url}/api/v1/health`)).rejects.toMatchObject({
      code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY/),
    });
  });

  it('answers a plain-HTTP request on its port clearly: TLS_REQUIRED for the API, a redirect for the console', async () => {
    const plain = manager.url.replace('https:', 'http:');
    const api = await fetch(`${plain}/api/v1/health`);
    expect(api.status).toBe(400);
    const body = (await api.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('TLS_REQUIRED');
    expect(body.error.message).toContain(`use ${manager.url}`);
    const page = await fetch(`${plain}/datasets`, { redirect: 'manual' });
    expect(page.status).toBe(308);
    expect(page.headers.get('location')).toBe(`${manager.url}/datasets`);
    // The port still serves HTTPS afterwards.
    expect((await httpsCall(`${manager.url}/api/v1/health`, { ca: manager.caPem })).status).toBe(
      200,
    );
  });

  it('hands out join tokens that end with its CA fingerprint', async () => {
    const login = await httpsCall(`${manager.url}/api/v1/auth/login`, {
      ca: manager.caPem,
      method: 'POST',
      body: { username: 'admin', password: manager.adminPassword },
    });
    const { token: session } = JSON.parse(login.body) as { token: string };
    const created = await httpsCall(`${manager.url}/api/v1/tokens`, {
      ca: manager.caPem,
      method: 'POST',
      body: {},
      token: session,
    });
    expect(created.status).toBe(201);
    const { token } = JSON.parse(created.body) as { token: string };
    expect(token).toMatch(new RegExp(`^flj_[A-Za-z0-9_-]+::${manager.caFingerprint}$`));
  });

  it('reuses its CA and certificate across restarts; a new name reissues the certificate from the same CA', async () => {
    const dir = tlsDir(home);
    const before = {
      ca: await readFile(join(dir, 'ca.pem'), 'utf8'),
      cert: await readFile(join(dir, 'server.pem'), 'utf8'),
    };
    await manager.close();
    manager = await startManager(overrides());
    expect(await readFile(join(dir, 'ca.pem'), 'utf8')).toBe(before.ca);
    expect(await readFile(join(dir, 'server.pem'), 'utf8')).toBe(before.cert);
    expect((await httpsCall(`${manager.url}/api/v1/health`, { ca: before.ca })).status).toBe(200);

    await manager.close();
    manager = await startManager({ ...overrides(), tlsNames: ['cache.example.test'] });
    expect(await readFile(join(dir, 'ca.pem'), 'utf8')).toBe(before.ca);
    const reissued = await readFile(join(dir, 'server.pem'), 'utf8');
    expect(reissued).not.toBe(before.cert);
    expect(new (await import('node:crypto')).X509Certificate(reissued).subjectAltName).toContain(
      'DNS:cache.example.test',
    );
    expect((await httpsCall(`${manager.url}/api/v1/health`, { ca: before.ca })).status).toBe(200);
  }, 120_000);
});
