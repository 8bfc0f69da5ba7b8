import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../test/harness.js';
import { BUILT_CONSOLE_DIR, consoleRoot } from './console.js';

let dir: string;
let h: Harness;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fl-console-'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>FreeLoader</title>');
  await writeFile(join(dir, 'app.js'), 'console.log(1)');
  h = await startHarness({ consoleDir: dir });
});
afterAll(async () => {
  await h?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('console (CONSOLE_DIR)', () => {
  it.each([
    ['/', 200, /text\/html/, 'FreeLoader'],
    ['/app.js', 200, /javascript/, 'console.log'],
    ['/agents/some-id', 200, /text\/html/, 'FreeLoader'],
    ['/api/v1/missing', 404, /json/, 'NOT_FOUND'],
  ])('GET %s → %i', async (url, status, type, text) => {
    const res = await h.call({ method: 'GET', url });
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(type);
    expect(res.body).toContain(text);
  });

  it('still serves the API', async () => {
    expect((await h.call({ method: 'GET', url: '/api/v1/health' })).statusCode).toBe(200);
  });
});

describe('consoleRoot', () => {
  it.each<[string, string | undefined, boolean, string | null]>([
    ['CONSOLE_DIR wins', '/srv/console', true, '/srv/console'],
    ['the built console when there is one', undefined, true, 'BUILT'],
    ['none when nothing is built', undefined, false, null],
  ])('%s', async (_name, configured, built, expected) => {
    const builtDir = await mkdtemp(join(tmpdir(), 'fl-built-'));
    if (built) await writeFile(join(builtDir, 'index.html'), '<!doctype html>');
    try {
      expect(consoleRoot(configured, builtDir)).toBe(expected === 'BUILT' ? builtDir : expected);
    } finally {
      await rm(builtDir, { recursive: true, force: true });
    }
  });

  it('looks for the build at apps/console/dist of this repository', () => {
    expect(BUILT_CONSOLE_DIR).toBe(
      join(fileURLToPath(new URL('../../../..', import.meta.url)), 'apps/console/dist'),
    );
  });
});
