import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../test/harness.js';

let h: Harness;
let admin: string;
let scientist: string;
beforeAll(async () => {
  h = await startHarness();
  admin = (await h.login('admin')).authorization;
  scientist = (await h.login('scientist')).authorization;
});
afterAll(async () => {
  await h?.close();
});

describe('join tokens', () => {
  it.each([
    ['no auth', undefined, 401, 'UNAUTHENTICATED'],
    ['a scientist', () => scientist, 403, 'FORBIDDEN'],
  ])('refuses creation by %s', async (_who, auth, status, code) => {
    const res = await h.call({
      method: 'POST',
      url: '/api/v1/tokens',
      headers: auth ? { authorization: auth() } : {},
      payload: {},
    });
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(code);
  });

  it('lets an admin create one (secret shown once), list and revoke it', async () => {
    const created = await h.call({
      method: 'POST',
      url: '/api/v1/tokens',
      headers: { authorization: admin },
      payload: { maxUses: 3, ttlSeconds: 3600, note: 'lab PCs' },
    });
    expect(created.statusCode).toBe(201);
    const tok = created.json();
    expect(tok).toMatchObject({ maxUses: 3, uses: 0, note: 'lab PCs', revoked: false });
    expect(tok.token).toMatch(/^flj_/);
    const expiresIn = Date.parse(tok.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(3500_000);
    expect(expiresIn).toBeLessThan(3700_000);

    const list = await h.call({
      method: 'GET',
      url: '/api/v1/tokens',
      headers: { authorization: admin },
    });
    const listed = list.json().find((t: { id: string }) => t.id === tok.id);
    expect(listed).toBeDefined();
    expect(listed.token).toBeUndefined();

    const del = await h.call({
      method: 'DELETE',
      url: `/api/v1/tokens/${tok.id}`,
      headers: { authorization: admin },
    });
    expect(del.json()).toEqual({ ok: true });
    const after = await h.call({
      method: 'GET',
      url: '/api/v1/tokens',
      headers: { authorization: admin },
    });
    expect(after.json().find((t: { id: string }) => t.id === tok.id).revoked).toBe(true);
  });

  it.each([
    ['DELETE', '/api/v1/tokens/not-a-uuid', 400, 'VALIDATION_FAILED'],
    ['DELETE', '/api/v1/tokens/00000000-0000-4000-8000-000000000000', 404, 'NOT_FOUND'],
  ])('%s %s → %i', async (method, url, status, code) => {
    const res = await h.call({
      method: method,
      url,
      headers: { authorization: admin },
    });
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(code);
  });

  it.each([{ maxUses: 0 }, { ttlSeconds: 1 }, { maxUses: 'many' }])(
    'rejects body %o',
    async (payload) => {
      const res = await h.call({
        method: 'POST',
        url: '/api/v1/tokens',
        headers: { authorization: admin },
        payload,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'VALIDATION_FAILED',
        message: expect.stringContaining('body'),
      });
    },
  );
});
