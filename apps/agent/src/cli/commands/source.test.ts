import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoginResponse } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import {
  killSpawned,
  runCli,
  startTestManager,
  type TestManager,
} from '../../test/cluster-harness.js';

describe('freeloader source / cache', () => {
  let tm: TestManager;
  let src: TestServer;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    tm = await startTestManager();
    src = await startTestServer({ size: 8 * 1024 * 1024, delayMs: 20 });
    const login = await tm.admin.request<LoginResponse>('POST', '/auth/login', {
      username: 'admin',
      password: tm.adminPassword,
    });
    env = { FREELOADER_TOKEN: login.token };
  }, 180_000);
  afterAll(async () => {
    await killSpawned();
    await src?.close();
    await tm?.close();
  });

  it('probe measures L, R_patch and a request size, and the manager lists the source', async () => {
    const probe = await runCli(
      ['source', 'probe', src.url, '--width', '2', '--bytes', '8MiB', '--manager', tm.url],
      env,
    );
    expect(probe.stderr).toMatch(/request +1 MiB: [\d.]+ MB\/s/);
    expect(probe.code).toBe(0);
    expect(probe.stdout).toMatch(/^L \d+\.\d{3} s, R_patch [\d.]+ MB\/s at width 2, request size /);
    const list = await runCli(['source', 'list', '--manager', tm.url], env);
    expect(list.code).toBe(0);
    const origin = new URL(src.url).origin;
    expect(list.stdout).toContain(origin);
    expect(list.stdout).toMatch(/R_patch [\d.]+ MB\/s \(width 2\)/);
  });

  it('cache status shows space, watermarks and eviction counts', async () => {
    const status = await runCli(['cache', 'status', '--manager', tm.url], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/used \(evict above 90 %, down to 75 %\); 0 trims/);
  });
});
