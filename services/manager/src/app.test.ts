import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './test/harness.js';

const logs: string[] = [];
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ logLevel: 'info' }, { logStream: { write: (l) => void logs.push(l) } });
});
afterAll(async () => {
  await h?.close();
});

describe('app', () => {
  it('answers health without auth', async () => {
    const res = await h.call({ method: 'GET', url: '/api/v1/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });

  it('serves the OpenAPI document at /docs/json with every route and ErrorBody', async () => {
    const res = await h.call({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    for (const path of [
      '/api/v1/health',
      '/api/v1/auth/login',
      '/api/v1/tokens',
      '/api/v1/agents/enroll',
      '/api/v1/agents/heartbeat',
      '/api/v1/namespace',
      '/api/v1/datasets/{id}/map',
      '/api/v1/reservations/{id}/commit',
      '/api/v1/jobs/claim',
      '/api/v1/transfers',
      '/api/v1/events',
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(doc.components.schemas.ErrorBody).toBeDefined();
    expect(JSON.stringify(doc.paths['/api/v1/tokens'].post.responses['403'])).toContain('error');
    expect((await h.call({ method: 'GET', url: '/docs' })).statusCode).toBeLessThan(400);
  });

  it('answers unknown routes with 404 ErrorBody', async () => {
    const res = await h.call({ method: 'GET', url: '/api/v1/nope?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: { code: 'NOT_FOUND', message: 'no route GET /api/v1/nope' },
    });
  });

  it('does not leak database errors in 500s, but logs them', async () => {
    const admin = (await h.login('admin')).authorization;
    await h.app.pg.query('ALTER TABLE join_tokens RENAME TO join_tokens_hidden');
    try {
      const res = await h.call({
        method: 'GET',
        url: '/api/v1/tokens',
        headers: { authorization: admin },
      });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({
        error: { code: 'INTERNAL', message: 'internal error; see the manager log' },
      });
      expect(res.body).not.toContain('join_tokens');
      expect(logs.some((l) => l.includes('relation \\"join_tokens\\" does not exist'))).toBe(true);
    } finally {
      await h.app.pg.query('ALTER TABLE join_tokens_hidden RENAME TO join_tokens');
    }
  });

  it('redacts credentials from log lines', () => {
    h.app.log.info(
      {
        req: { headers: { authorization: 'Bearer s3cr3t', cookie: 'fl_session=s3cr3t' } },
        body: { password: 's3cr3t', token: 's3cr3t' },
      },
      'probe',
    );
    const line = logs.find((l) => l.includes('"probe"'))!;
    expect(line).toContain('[redacted]');
    expect(line).not.toContain('s3cr3t');
  });

  it('rejects JSON bodies over the limit with 413', async () => {
    const res = await h.call({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { username: 'x', password: 'y'.repeat(2 * 1024 * 1024) },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
