import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { startHarness, type Harness } from '../test/harness.js';

// This manager allows no source address beyond the public ones: the harness's loopback
// allowance is turned off, so what is refused here is what production refuses.
let h: Harness;
let admin: string;
let user: string;
let srv: TestServer;
let redirector: Server;
let redirectPort: number;
beforeAll(async () => {
  h = await startHarness({ sourceAllow: [] });
  admin = (await h.login('admin')).authorization;
  user = (await h.login('scientist')).authorization;
  srv = await startTestServer({ size: 10_000 });
  redirector = createServer((_req, res) => res.writeHead(302, { location: srv.url }).end());
  await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
  redirectPort = (redirector.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => redirector?.close(r));
  await srv?.close();
  await h?.close();
});

const importUri = (uri: string) =>
  h.call({
    method: 'POST',
    url: '/api/v1/datasets',
    headers: { authorization: user },
    payload: { uri, name: `ssrf/${Math.random().toString(36).slice(2)}` },
  });
const allow = (entries: string[]) =>
  h.call({
    method: 'PUT',
    url: '/api/v1/settings/sources',
    headers: { authorization: admin },
    payload: { allow: entries },
  });
const port = () => new URL(srv.url).port;

describe("the manager's probe under the source policy", () => {
  it.each([
    ['loopback', () => `http://127.0.0.1:${port()}/data.bin`],
    ['10/8', () => 'http://10.1.2.3/data.bin'],
    ['172.16/12', () => 'http://172.20.0.5/data.bin'],
    ['192.168/16', () => 'http://192.168.7.7/data.bin'],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/'],
    ['::1', () => `http://[::1]:${port()}/data.bin`],
    ['fc00::/7', () => 'http://[fd00:ec2::254]/latest/'],
    ['a name resolving to loopback', () => `http://localhost:${port()}/data.bin`],
    ['a redirect to loopback', () => `http://localhost:${redirectPort}/x`],
  ])('refuses %s with SOURCE_FORBIDDEN', async (_name, uri) => {
    const before = srv.requests;
    // The redirect case: the admin allows the first hop's name, not where it redirects to.
    if (uri().includes(String(redirectPort)))
      expect((await allow(['localhost'])).statusCode).toBe(200);
    try {
      const res = await importUri(uri());
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('SOURCE_FORBIDDEN');
      expect(res.json().error.message).toMatch(/an admin allows it/);
      expect(srv.requests).toBe(before);
    } finally {
      await allow([]);
    }
  });

  it('probes a loopback source once the admin allows it, and agents hear of it', async () => {
    const before = srv.requests;
    const set = await allow(['127.0.0.0/8']);
    expect(set.json()).toEqual({ allow: ['127.0.0.0/8'], fromEnvironment: [] });
    try {
      const res = await importUri(srv.url);
      // No donors here: the import stops after the probe, which reached the source.
      expect(res.json().error?.code).not.toBe('SOURCE_FORBIDDEN');
      expect(srv.requests).toBeGreaterThan(before);
      const agent = await h.enroll();
      const beat = await h.call({
        method: 'POST',
        url: '/api/v1/agents/heartbeat',
        headers: { authorization: agent.auth },
        payload: { quotaBytes: 5000, usedBytes: 0, freeBytes: 5000, servingRate: 0 },
      });
      expect(beat.json().sourceAllow).toEqual(['127.0.0.0/8']);
    } finally {
      await allow([]);
    }
  });

  it('lets only admins change the list, and refuses malformed entries', async () => {
    const asUser = await h.call({
      method: 'PUT',
      url: '/api/v1/settings/sources',
      headers: { authorization: user },
      payload: { allow: ['10.0.0.0/8'] },
    });
    expect(asUser.statusCode).toBe(403);
    const bad = await allow(['10.0.0.0/33']);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('VALIDATION_FAILED');
  });
});
