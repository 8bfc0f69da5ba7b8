import { mkdtemp, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SettingsBackend } from './control-backend.js';
import type { SettingsPatch } from './local-api.js';
import { SettingsClient } from './settings-client.js';
import { startSettingsServer, type SettingsServer } from './settings-server.js';
import { SetupBackend } from './setup-backend.js';

// The real server on 127.0.0.1 (port 0) in front of a recording backend: auth, host checks,
// validation, the UI files, and the swap from setup to an enrolled backend.
let dir: string;
let server: SettingsServer;
const calls: string[] = [];
const backend = (): SettingsBackend => {
  const base = new SetupBackend(dir, async () => undefined);
  return {
    state: () => ({ ...base.state(), enrolled: true, status: 'online' }),
    update: async (p: SettingsPatch) => void calls.push(`update ${JSON.stringify(p)}`),
    pause: async (span) => void calls.push(`pause ${span}`),
    resume: async () => void calls.push('resume'),
    reportIdle: async (ms) => void calls.push(`idle ${ms}`),
  };
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fl-settings-'));
  const ui = join(dir, 'ui');
  await mkdir(join(ui, 'assets'), { recursive: true });
  await writeFile(join(ui, 'index.html'), '<!doctype html><title>t</title>');
  await writeFile(join(ui, 'assets', 'app.js'), 'console.log(1)');
  server = await startSettingsServer({ backend: backend(), dir, port: 0, uiDir: ui });
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(new URL(path, server.url), { headers });

describe('settings server', () => {
  it('writes the token for the owner only and prints it in the fragment', async () => {
    expect((await stat(join(dir, 'settings-token'))).mode & 0o777).toBe(0o600);
    expect(server.openUrl).toBe(`${server.url}#token=${server.token}`);
  });

  it.each([
    ['no token', {}, 401],
    ['a wrong token', { authorization: 'Bearer nope' }, 401],
    ['another host name (DNS rebinding)', { host: 'evil.example:80' }, 403],
  ])('refuses %s', async (_name, headers, status) => {
    // node:http, not fetch: fetch will not send a Host header of our choosing.
    const url = new URL('api/state', server.url);
    const code = await new Promise<number | undefined>((resolve, reject) => {
      request(url, { headers }, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
        .on('error', reject)
        .end();
    });
    expect(code).toBe(status);
  });

  it('serves state, settings, pause and owner input to the token holder', async () => {
    const c = SettingsClient.fromOpenUrl(server.openUrl);
    expect((await c.state()).status).toBe('online');
    await c.update({ quotaBytes: 1024, governor: { idleCapBps: null } });
    await c.pause('tomorrow');
    await c.resume();
    await c.reportIdle(0);
    expect(calls).toEqual([
      'update {"quotaBytes":1024,"governor":{"idleCapBps":null}}',
      'pause tomorrow',
      'resume',
      'idle 0',
    ]);
  });

  it.each([
    ['a negative quota', { quotaBytes: -1 }],
    ['an unknown sensitivity', { governor: { sensitivity: 'extreme' } }],
  ])('validates: %s', async (_name, body) => {
    const res = await fetch(new URL('api/settings', server.url), {
      method: 'PATCH',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(400);
  });

  it.each([
    ['/', 200, 'text/html'],
    ['/assets/app.js', 200, 'text/javascript'],
    ['/assets/../../settings-token', 404, undefined],
    ['/%2e%2e/settings-token', 404, undefined],
  ])('UI file %s → %i', async (path, status, type) => {
    const res = await get(path);
    expect(res.status).toBe(status);
    if (type) expect(res.headers.get('content-type')).toContain(type);
    expect(await res.text()).not.toContain(server.token);
  });

  it('offers enrollment only before the agent is enrolled', async () => {
    const c = SettingsClient.fromOpenUrl(server.openUrl);
    const body = { managerUrl: 'http://m', token: 't', quotaBytes: 1 };
    const enroll = () =>
      fetch(new URL('api/enroll', server.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await enroll()).status).toBe(409);
    const enrolled: unknown[] = [];
    server.setBackend(new SetupBackend(dir, async (req) => void enrolled.push(req)));
    expect((await c.state()).status).toBe('setup');
    expect((await enroll()).status).toBe(200);
    expect(enrolled).toEqual([body]);
    server.setBackend(backend());
  });
});
