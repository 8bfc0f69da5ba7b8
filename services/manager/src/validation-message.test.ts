import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './test/harness.js';

let h: Harness;
let user: string;
beforeAll(async () => {
  h = await startHarness();
  user = (await h.login('scientist')).authorization;
}, 60_000);
afterAll(async () => {
  await h?.close();
});

async function error(method: 'GET' | 'POST', url: string, payload?: object) {
  const res = await h.call({ method, url, headers: { authorization: user }, payload });
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json<{ error: { code: string; message: string } }>();
  expect(body.error.code).toBe('VALIDATION_FAILED');
  // Never the regex: a scientist cannot read `must match pattern "^(?!/)…"`.
  expect(body.error.message).not.toMatch(/pattern|\(\?!/);
  return body.error.message;
}

describe('bad dataset names and paths are refused in words', () => {
  it.each([
    ['/climate/tas.nc', `name "/climate/tas.nc" must not start with '/'`],
    ['climate//tas.nc', `name "climate//tas.nc" must not contain an empty folder name ('//')`],
    ['climate/', `name "climate/" must not end with '/'`],
    ['climate/../tas.nc', `name "climate/../tas.nc" must not have '..' as a folder or file name`],
    ['tas\u0007.nc', 'name "tas\\x07.nc" must not contain control characters'],
    ['', 'name must not be empty'],
    ['x'.repeat(4097), 'name is 4097 characters long; at most 4096 are allowed'],
  ])('POST /datasets name %#', async (name, words) => {
    const message = await error('POST', '/api/v1/datasets', {
      uri: 'https://example.org/tas.nc',
      name,
    });
    expect(message).toContain(words);
  });

  it('POST /folders', async () =>
    expect(await error('POST', '/api/v1/folders', { path: '/abs//x' })).toBe(
      `path "/abs//x" must not start with '/' (paths are relative, like climate/tas.nc)`,
    ));

  it('GET /namespace?path=', async () =>
    expect(await error('GET', '/api/v1/namespace?path=a/../b')).toBe(
      `path "a/../b" must not have '..' as a folder or file name`,
    ));

  it('keeps Ajv words where they are already readable', async () =>
    expect(
      await error('POST', '/api/v1/datasets', { uri: 'https://example.org/x', width: 'wide' }),
    ).toBe('body/width must be integer'));
});
