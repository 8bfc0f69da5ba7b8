import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_FAILURES_PER_ADDRESS, type AuditEntry } from '@freeloader/protocol';
import { createUser } from '../bootstrap.js';
import { startHarness, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** Routes anyone may call: they authenticate by what the body carries, or need nothing. */
const PUBLIC = new Set([
  'GET /api/v1/health',
  'POST /api/v1/auth/login',
  'POST /api/v1/agents/enroll',
  // The manager's CA certificate: public, fetched before enrolment to check its fingerprint.
  'GET /api/v1/tls/ca',
]);

/** Every API route from the served OpenAPI description, path parameters filled in. */
function routeTable(): Array<{ method: string; url: string; key: string }> {
  const doc = h.app.swagger() as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods)
      .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map((m) => ({
        method: m.toUpperCase(),
        url: path.replace(/\{[^}]+\}/g, 'not-a-uuid'),
        key: `${m.toUpperCase()} ${path}`,
      })),
  );
}

describe('authentication comes before validation', () => {
  it('answers an anonymous request with a bad body, query and parameters 401 on every route', async () => {
    const routes = routeTable().filter((r) => r.url.startsWith('/api/v1/'));
    expect(routes.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const r of routes) {
      if (PUBLIC.has(r.key)) continue;
      const res = await h.call({
        method: r.method,
        url: `${r.url}?limit=not-a-number&width=-1`,
        ...(r.method === 'GET' ? {} : { payload: { bogus: [1, 2, 3], size: 'huge' } }),
      });
      if (res.statusCode !== 401) wrong.push(`${r.key} → ${res.statusCode} ${res.body}`);
    }
    expect(wrong).toEqual([]);
  });

  it('still validates the body of a signed-in caller', async () => {
    const { authorization } = await h.login('admin');
    const res = await h.call({
      method: 'POST',
      url: '/api/v1/users',
      headers: { authorization },
      payload: { bogus: true },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_FAILED');
  });
});

describe('login rate limit', () => {
  it(`answers 429 with Retry-After after ${LOGIN_FAILURES_PER_ADDRESS} failures from one address; another address still logs in`, async () => {
    await createUser(h.app, { username: 'grace', password: 'right-password', role: 'scientist' });
    const login = (password: string, remoteAddress: string) =>
      h.call({
        method: 'POST',
        url: '/api/v1/auth/login',
        remoteAddress,
        payload: { username: 'grace', password },
      });
    for (let i = 0; i < LOGIN_FAILURES_PER_ADDRESS; i++) {
      expect((await login(`wrong-${i}`, '192.0.2.7')).statusCode).toBe(401);
    }
    const limited = await login('wrong-again', '192.0.2.7');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Even the right password waits at that address: guessing stops paying.
    expect((await login('right-password', '192.0.2.7')).statusCode).toBe(429);
    expect((await login('right-password', '198.51.100.9')).statusCode).toBe(200);
  });
});

describe('audit log', () => {
  async function auditEntries(authorization: string): Promise<AuditEntry[]> {
    const all: AuditEntry[] = [];
    let before: string | null = null;
    do {
      const res = await h.call({
        method: 'GET',
        url: `/api/v1/audit?limit=3${before ? `&before=${before}` : ''}`,
        headers: { authorization },
      });
      expect(res.statusCode).toBe(200);
      const page = res.json<{ entries: AuditEntry[]; next: string | null }>();
      all.push(...page.entries);
      before = page.next;
    } while (before !== null);
    return all;
  }

  it('records each action with who, what and from where; only admins read it', async () => {
    const { authorization: admin } = await h.login('admin');
    // Enough rows before this test's own that ids reach two digits (text order would break).
    const as = (method: string, url: string, payload?: unknown, remoteAddress = '203.0.113.5') =>
      h.call({
        method: method,
        url,
        headers: { authorization: admin },
        remoteAddress,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const token = (await as('POST', '/api/v1/tokens', { note: 'lab pc' })).json<{ id: string }>();
    expect((await as('DELETE', `/api/v1/tokens/${token.id}`)).statusCode).toBe(200);
    const agent = await h.enroll();
    expect((await as('DELETE', `/api/v1/agents/${agent.agentId}`)).statusCode).toBe(200);
    const pw = 'long-enough-pw';
    expect((await as('POST', '/api/v1/users', { username: 'hedy', password: pw })).statusCode).toBe(
      201,
    );
    expect(
      (await as('PUT', '/api/v1/settings/sources', { allow: ['10.9.0.0/16'] })).statusCode,
    ).toBe(200);
    const ds = await h.app.namespaceRepo.createDataset({ path: 'audit/one.bin', sizeBytes: 0 });
    expect((await as('DELETE', `/api/v1/datasets/${ds.id}`)).statusCode).toBe(200);
    await h.call({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: '203.0.113.77',
      payload: { username: 'hedy', password: 'not-it' },
    });
    await h.call({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: '203.0.113.78',
      payload: { username: 'hedy', password: pw },
    });
    const hedy = (
      await h.call({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { username: 'hedy', password: pw },
      })
    ).json<{ token: string }>().token;
    const ssrf = await h.call({
      method: 'POST',
      url: '/api/v1/datasets',
      headers: { authorization: `Bearer ${hedy}` },
      payload: { uri: 'http://169.254.169.254/latest/', name: 'ssrf-probe/meta' },
    });
    expect(ssrf.statusCode).toBe(403);

    // Rows are written as each answer goes out: poll for the last one.
    let rows: AuditEntry[] = [];
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      rows = await auditEntries(admin);
      if (rows.some((r) => r.action === 'dataset.import')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const find = (action: string, target?: string) =>
      rows.find((r) => r.action === action && (target === undefined || r.target === target));
    expect(find('token.create', 'lab pc')).toMatchObject({ outcome: 'ok', address: '203.0.113.5' });
    expect(find('token.revoke', token.id)).toMatchObject({ outcome: 'ok' });
    expect(find('agent.revoke', agent.agentId)).toMatchObject({ outcome: 'ok' });
    expect(find('user.create', 'hedy')).toMatchObject({ details: { role: 'scientist' } });
    expect(find('settings.sources')).toMatchObject({ details: { allow: ['10.9.0.0/16'] } });
    expect(find('dataset.delete', ds.id)).toMatchObject({ outcome: 'ok' });
    expect(find('login.failed', 'hedy')).toMatchObject({
      address: '203.0.113.77',
      outcome: 'refused',
    });
    expect(rows).toContainEqual(
      expect.objectContaining({
        action: 'login.succeeded',
        address: '203.0.113.78',
        actor: 'hedy',
        outcome: 'ok',
      }),
    );
    expect(find('dataset.import', 'ssrf-probe/meta')).toMatchObject({
      actor: 'hedy',
      outcome: 'refused',
    });
    const adminName = find('token.create')!.actor;
    expect(adminName).toMatch(/^admin-/);
    expect(rows.map((r) => Number(r.id))).toEqual(
      rows.map((r) => Number(r.id)).sort((a, b) => b - a),
    );
    // Never the password.
    expect(JSON.stringify(rows)).not.toContain(pw);

    const asUser = await h.call({
      method: 'GET',
      url: '/api/v1/audit',
      headers: { authorization: `Bearer ${hedy}` },
    });
    expect(asUser.statusCode).toBe(403);
  });
});
