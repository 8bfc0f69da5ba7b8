import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoginResponse, UserView } from '@freeloader/protocol';
import { ManagerClient } from '../../manager-client.js';
import {
  killSpawned,
  runCli,
  startTestManager,
  type TestManager,
} from '../../test/cluster-harness.js';
import { parseRole } from './user.js';

describe('parseRole', () => {
  it.each([
    ['scientist', 'scientist'],
    ['admin', 'admin'],
    ['root', null],
    ['', null],
  ])('%j → %j', (text, role) => {
    if (role) expect(parseRole(text)).toBe(role);
    else expect(() => parseRole(text)).toThrow(/role must be one of scientist, admin/);
  });
});

describe('freeloader user', () => {
  let tm: TestManager;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    tm = await startTestManager();
    const login = await tm.admin.request<LoginResponse>('POST', '/auth/login', {
      username: 'admin',
      password: tm.adminPassword,
    });
    env = { FREELOADER_TOKEN: login.token };
  }, 180_000);
  afterAll(async () => {
    await killSpawned();
    await tm?.close();
  });

  async function canLogIn(username: string, password: string): Promise<string> {
    const client = new ManagerClient(tm.url);
    try {
      return (await client.request<LoginResponse>('POST', '/auth/login', { username, password }))
        .user.role;
    } finally {
      await client.close();
    }
  }

  it('create prints a generated password once, which then signs the user in', async () => {
    const res = await runCli(['user', 'create', 'ada', '--manager', tm.url], env);
    expect(res.code, res.stderr).toBe(0);
    const password = res.stdout.trim();
    expect(password).toMatch(/^[\w-]{20}$/);
    expect(res.stderr).toMatch(/created scientist "ada"/);
    expect(await canLogIn('ada', password)).toBe('scientist');
  });

  it('create takes FREELOADER_PASSWORD and --role, and prints no password', async () => {
    const res = await runCli(['user', 'create', 'root2', '--role', 'admin', '--manager', tm.url], {
      ...env,
      FREELOADER_PASSWORD: 'chosen password',
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe('');
    expect(await canLogIn('root2', 'chosen password')).toBe('admin');
  });

  it.each([
    [['user', 'create', 'bob', '--role', 'root'], {}, /role must be one of/],
    [['user', 'create', 'ada'], {}, /already exists \[ALREADY_EXISTS\]/],
    [['user', 'create', 'eve'], { FREELOADER_PASSWORD: 'short' }, /at least 8 characters/],
  ])('%j fails in one line', async (args, extra, message) => {
    const res = await runCli([...args, '--manager', tm.url], { ...env, ...extra });
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toMatch(message);
  });

  it('list shows every user', async () => {
    const res = await runCli(['user', 'list', '--manager', tm.url], env);
    expect(res.code, res.stderr).toBe(0);
    const users = await tm.admin.request<UserView[]>('GET', '/users');
    for (const u of users) expect(res.stdout).toContain(u.username);
    expect(res.stdout).toMatch(/^ada\s+scientist/m);
  });
});
