import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../bootstrap.js';
import { startHarness, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await createUser(h.app, { username: 'ada', password: 'correct horse', role: 'scientist' });
});
afterAll(async () => {
  await h?.close();
});

const login = (username: string, password: string) =>
  h.call({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });

describe('auth', () => {
  it('logs in with the right password: token in the body and an httpOnly strict cookie', async () => {
    const res = await login('ada', 'correct horse');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.user).toMatchObject({ username: 'ada', role: 'scientist' });
    expect(body.token).toMatch(/^fls_/);
    const cookie = res.cookies.find((c) => c.name === 'fl_session');
    expect(cookie).toMatchObject({ value: body.token, httpOnly: true, sameSite: 'Strict' });
  });

  it.each([
    ['ada', 'wrong'],
    ['nobody', 'correct horse'],
  ])('refuses %s / %s with 401 BAD_CREDENTIALS', async (username, password) => {
    const res = await login(username, password);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('BAD_CREDENTIALS');
  });

  it.each([
    [{ username: 'ada' }, 400, 'VALIDATION_FAILED'],
    [{ username: '', password: 'x' }, 400, 'VALIDATION_FAILED'],
    [{ username: 'ada', password: 'x'.repeat(2000) }, 400, 'VALIDATION_FAILED'],
    // Unknown fields are ignored: the wrong password is what fails.
    [{ username: 'ada', password: 'x', role: 'admin' }, 401, 'BAD_CREDENTIALS'],
  ])('answers body %o with %i %s', async (payload, status, code) => {
    const res = await h.call({ method: 'POST', url: '/api/v1/auth/login', payload });
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(code);
  });

  it('rejects non-JSON bodies with an ErrorBody', async () => {
    const res = await h.call({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('BAD_REQUEST');
  });

  it('answers /me by bearer token and by cookie, and logout ends the session', async () => {
    const token = (await login('ada', 'correct horse')).json().token as string;
    const byBearer = await h.call({
      method: 'GET',
      url: '/api/v1/auth/me',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(byBearer.statusCode).toBe(200);
    expect(byBearer.json()).toMatchObject({ username: 'ada', role: 'scientist' });
    const byCookie = await h.call({
      method: 'GET',
      url: '/api/v1/auth/me',
      cookies: { fl_session: token },
    });
    expect(byCookie.json().username).toBe('ada');

    const out = await h.call({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(out.statusCode).toBe(200);
    const after = await h.call({
      method: 'GET',
      url: '/api/v1/auth/me',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(after.statusCode).toBe(401);
    expect(after.json().error.code).toBe('UNAUTHENTICATED');
  });

  it.each([undefined, 'Bearer nonsense', 'Basic abc'])(
    'refuses /me with authorization %s',
    async (authorization) => {
      const res = await h.call({
        method: 'GET',
        url: '/api/v1/auth/me',
        headers: authorization ? { authorization } : {},
      });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('UNAUTHENTICATED');
    },
  );
});
