import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_FAILURES_PER_ADDRESS } from '@freeloader/protocol';
import { buildApp } from '../app.js';
import { createUser } from '../bootstrap.js';
import { createLoginFailuresRepo } from '../repositories/login-failures.js';
import { startHarness, testConfig, type Harness } from '../test/harness.js';
import { LoginThrottle } from './login-throttle.js';

// The throttle on real PostgreSQL (its counts are rows of login_failures), and through two
// managers sharing one database.
let h: Harness;
let b: FastifyInstance;
beforeAll(async () => {
  h = await startHarness();
  b = await buildApp(testConfig(h.db.url), { timers: false });
});
afterAll(async () => {
  await b?.close();
  await h?.close();
});

let run = 0;

describe('LoginThrottle', () => {
  const limits = { perAddress: 3, perUser: 5, windowMs: 60_000 };

  it.each<{
    name: string;
    failures: Array<[string, string]>;
    check: [string, string];
    wait: number;
  }>([
    {
      name: 'below the address limit',
      failures: [
        ['ada', 'A'],
        ['ada', 'A'],
      ],
      check: ['ada', 'A'],
      wait: 0,
    },
    {
      name: 'address used up',
      failures: [
        ['ada', 'A'],
        ['bob', 'A'],
        ['eve', 'A'],
      ],
      check: ['zed', 'A'],
      wait: 60,
    },
    {
      name: 'another address, same user',
      failures: [
        ['ada', 'A'],
        ['ada', 'A'],
        ['ada', 'A'],
      ],
      check: ['ada', 'B'],
      wait: 0,
    },
    {
      name: 'user used up from many addresses',
      failures: [
        ['ada', 'A'],
        ['ada', 'B'],
        ['ada', 'C'],
        ['ada', 'D'],
        ['Ada', 'E'],
      ],
      check: ['ada', 'F'],
      wait: 60,
    },
  ])('$name', async ({ failures, check, wait }) => {
    // Names and addresses of this case only: the table is shared by the cases.
    const tag = `r${++run}-`;
    const t = new LoginThrottle(createLoginFailuresRepo(h.app.pg), limits);
    for (const [u, a] of failures) await t.failed(tag + u, tag + a);
    const attempt = t.check(tag + check[0], tag + check[1]);
    if (wait === 0) {
      await expect(attempt).resolves.toBeUndefined();
    } else {
      // Seconds left of the window, rounded up: 60 unless the database took a second.
      await expect(attempt).rejects.toMatchObject({
        code: 'RATE_LIMITED',
        details: { retryAfterS: expect.toSatisfy((s: number) => s > wait - 5 && s <= wait) },
      });
    }
  });

  it('forgets a window once it ends, and a new failure opens a new one', async () => {
    const windowMs = 1_500;
    const t = new LoginThrottle(createLoginFailuresRepo(h.app.pg), { ...limits, windowMs });
    const [u, a] = [`r${++run}-ada`, `r${run}-A`];
    for (let i = 0; i < 3; i++) await t.failed(u, a);
    await expect(t.check(u, a)).rejects.toMatchObject({ details: { retryAfterS: 2 } });
    // Ends by the database's clock: poll for it rather than sleep a guessed time.
    const until = performance.now() + 60_000;
    while (
      (await t.check(u, a).then(
        () => false,
        () => true,
      )) &&
      performance.now() < until
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await expect(t.check(u, a)).resolves.toBeUndefined();
    await t.failed(u, a);
    await expect(t.check(u, a)).resolves.toBeUndefined();
    expect(await createLoginFailuresRepo(h.app.pg).live([`addr ${a}`])).toEqual(
      new Map([[`addr ${a}`, { failures: 1, leftMs: expect.any(Number) }]]),
    );
  });
});

describe('two managers on one database', () => {
  const login = (app: FastifyInstance, password: string) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { username: 'shared-ada', password },
    });

  it('share the count: guesses spread over both are limited as on one', async () => {
    await createUser(h.app, { username: 'shared-ada', password: 'pw-right-1', role: 'scientist' });
    // Alternate managers; the address (inject's 127.0.0.1) uses up its failures across both.
    for (let i = 0; i < LOGIN_FAILURES_PER_ADDRESS; i++) {
      const res = await login(i % 2 ? b : h.app, `wrong-${i}`);
      expect(res.statusCode, res.body).toBe(401);
    }
    for (const app of [h.app, b]) {
      const res = await login(app, 'pw-right-1');
      expect(res.statusCode, res.body).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
  });
});
