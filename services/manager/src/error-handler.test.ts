import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FreeLoaderError } from '@freeloader/protocol';
import { errorHandler } from './error-handler.js';

const app = Fastify({ logger: false });
const SECRET = 'password authentication failed for user "postgres" at 10.0.0.7';

beforeAll(async () => {
  app.setErrorHandler(errorHandler);
  app.get('/coded', async () => {
    throw new FreeLoaderError('NO_SPACE', 'cache full', { freeBytes: 3 });
  });
  app.get('/coded-500', async () => {
    throw new FreeLoaderError('INTERNAL', 'invariant broken');
  });
  app.get('/plain', async () => {
    throw new Error(SECRET);
  });
  app.get('/db-down', async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7432'), {
      code: 'ECONNREFUSED',
    });
  });
  app.get('/fastify-4xx', async () => {
    throw Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 });
  });
  app.post(
    '/validated',
    {
      schema: { body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } },
    },
    async () => ({ ok: true }),
  );
  await app.ready();
});
afterAll(() => app.close());

describe('errorHandler', () => {
  it.each([
    ['/coded', 507, { code: 'NO_SPACE', message: 'cache full', details: { freeBytes: 3 } }],
    ['/coded-500', 500, { code: 'INTERNAL', message: 'invariant broken' }],
    ['/plain', 500, { code: 'INTERNAL', message: 'internal error; see the manager log' }],
    ['/fastify-4xx', 415, { code: 'BAD_REQUEST', message: 'Unsupported Media Type' }],
  ])('GET %s → %i %o', async (url, status, error) => {
    const res = await app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error });
    expect(res.body).not.toContain('10.0.0.7');
  });

  it('answers a database it cannot reach with 503 UNAVAILABLE and Retry-After', async () => {
    const res = await app.inject({ method: 'GET', url: '/db-down' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json().error.code).toBe('UNAVAILABLE');
    expect(res.body).not.toContain('7432');
  });

  it('turns schema failures into 400 VALIDATION_FAILED with the reason', async () => {
    const res = await app.inject({ method: 'POST', url: '/validated', payload: { n: 'x' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'body/n must be integer',
    });
  });
});
