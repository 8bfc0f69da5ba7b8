import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSRF_HEADER } from '@freeloader/protocol';
import { createUser } from '../bootstrap.js';
import { startHarness, type Harness } from '../test/harness.js';

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await startHarness();
  await createUser(h.app, { username: 'root', password: 'root password', role: 'admin' });
  const res = await h.call({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { username: 'root', password: 'root password' },
  });
  token = res.json().token;
});
afterAll(async () => {
  await h?.close();
});

type Via = 'cookie' | 'cookie+csrf' | 'bearer';
const auth = (via: Via) => ({
  cookies: via === 'bearer' ? ({} as Record<string, string>) : { fl_session: token },
  headers: {
    ...(via === 'bearer' ? { authorization: `Bearer ${token}` } : {}),
    ...(via === 'cookie+csrf' ? { [CSRF_HEADER]: '1' } : {}),
  },
});

let seq = 0;
describe('CSRF defence on cookie sessions', () => {
  it.each<[string, string, Via, number, string | null]>([
    ['GET', '/api/v1/auth/me', 'cookie', 200, null],
    ['POST', '/api/v1/folders', 'cookie', 403, 'CSRF_REJECTED'],
    ['POST', '/api/v1/folders', 'cookie+csrf', 201, null],
    ['POST', '/api/v1/folders', 'bearer', 201, null],
    ['POST', '/api/v1/tokens', 'cookie', 403, 'CSRF_REJECTED'],
    ['POST', '/api/v1/tokens', 'cookie+csrf', 201, null],
    [
      'DELETE',
      '/api/v1/agents/00000000-0000-4000-8000-000000000000',
      'cookie',
      403,
      'CSRF_REJECTED',
    ],
    ['DELETE', '/api/v1/agents/00000000-0000-4000-8000-000000000000', 'cookie+csrf', 404, null],
    ['POST', '/api/v1/auth/logout', 'cookie', 403, 'CSRF_REJECTED'],
  ])('%s %s via %s → %i %s', async (method, url, via, status, code) => {
    const payload = url.endsWith('/folders')
      ? { path: `f${++seq}` }
      : url.endsWith('/tokens')
        ? {}
        : undefined;
    const res = await h.call({ method: method, url, payload, ...auth(via) });
    expect(res.statusCode).toBe(status);
    if (code) expect(res.json().error.code).toBe(code);
  });

  it('a refused logout leaves the session alive; one with the header ends it', async () => {
    const me = () => h.call({ method: 'GET', url: '/api/v1/auth/me', ...auth('cookie') });
    expect((await me()).statusCode).toBe(200);
    const out = await h.call({
      method: 'POST',
      url: '/api/v1/auth/logout',
      ...auth('cookie+csrf'),
    });
    expect(out.statusCode).toBe(200);
    expect((await me()).statusCode).toBe(401);
  });
});
