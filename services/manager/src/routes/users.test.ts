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

const create = (authorization: string | undefined, payload: unknown) =>
  h.call({
    method: 'POST',
    url: '/api/v1/users',
    headers: authorization ? { authorization } : {},
    payload: payload as object,
  });

describe('users (admin)', () => {
  it('creates a scientist by default who can then log in', async () => {
    const res = await create(admin, { username: 'grace', password: 'a long password' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ username: 'grace', role: 'scientist' });
    expect(res.body).not.toContain('a long password');
    const login = await h.call({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { username: 'grace', password: 'a long password' },
    });
    expect(login.json().user.role).toBe('scientist');
  });

  it.each<[string, () => string | undefined, object, number, string]>([
    [
      'anonymous',
      () => undefined,
      { username: 'x1', password: 'password1' },
      401,
      'UNAUTHENTICATED',
    ],
    ['a scientist', () => scientist, { username: 'x2', password: 'password1' }, 403, 'FORBIDDEN'],
    [
      'a short password',
      () => admin,
      { username: 'x3', password: 'short' },
      400,
      'VALIDATION_FAILED',
    ],
    [
      'a bad name',
      () => admin,
      { username: 'a b', password: 'password1' },
      400,
      'VALIDATION_FAILED',
    ],
    [
      'a bad role',
      () => admin,
      { username: 'x4', password: 'password1', role: 'root' },
      400,
      'VALIDATION_FAILED',
    ],
    [
      'a taken name',
      () => admin,
      { username: 'grace', password: 'password1' },
      409,
      'ALREADY_EXISTS',
    ],
  ])('refuses %s', async (_what, who, payload, status, code) => {
    const res = await create(who(), payload);
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(code);
  });

  it('lists users by name to admins only', async () => {
    const list = await h.call({
      method: 'GET',
      url: '/api/v1/users',
      headers: { authorization: admin },
    });
    expect(list.statusCode).toBe(200);
    const names = list.json<{ username: string }[]>().map((u) => u.username);
    expect(names).toContain('grace');
    expect(names).toEqual([...names].sort());
    expect(list.body).not.toMatch(/hash/i);
    const denied = await h.call({
      method: 'GET',
      url: '/api/v1/users',
      headers: { authorization: scientist },
    });
    expect(denied.statusCode).toBe(403);
  });
});
