import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatasetView, LoginResponse } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { CLI_MAIN } from '../test/processes.js';
import { killSpawned, runCli, waitFor, waitForAgentState } from '../test/cluster-harness.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/**
 * What the CLI prints, run as real processes against a real cluster: labeled values, errors in
 * one line of words, `stat` with donors and health, and stdout and stderr sharing one pipe.
 */
describe('freeloader CLI output', { timeout: 120_000 }, () => {
  let c: DataCluster;
  let web: TestServer;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    c = await startDataCluster(2, '64MiB');
    web = await startTestServer({ size: 3 * 1024 * 1024 });
    const login = await c.tm.admin.request<LoginResponse>('POST', '/auth/login', {
      username: 'admin',
      password: c.tm.adminPassword,
    });
    env = { FREELOADER_TOKEN: login.token, FREELOADER_MANAGER: c.tm.url };
  }, 120_000);
  afterAll(async () => {
    await killSpawned();
    await web?.close();
    await c?.close();
  });

  const cli = (args: string[]) => runCli(args, env, 90_000);

  it('import labels the dataset id; --json gives the dataset to scripts', async () => {
    const res = await cli(['import', web.url, '--name', 'out/a.bin', '--width', '2', '--wait']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^dataset id: ${UUID}\\n$`));
    expect(res.stderr).toMatch(/^copies: 2 — manager default \(REPLICAS_DEFAULT=2\)$/m);
    const one = await cli([
      'import',
      web.url,
      '--name',
      'out/one.bin',
      '--replicas',
      '1',
      '--wait',
    ]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stderr).toMatch(/^copies: 1 — 1 copy as requested$/m);
    const json = await cli(['import', web.url, '--name', 'out/b.bin', '--json', '--wait']);
    expect(json.code, json.stderr).toBe(0);
    const body = JSON.parse(json.stdout) as { dataset: DatasetView };
    expect(body.dataset).toMatchObject({ path: 'out/b.bin', state: 'ready' });
  });

  it('stat shows placement policy, donors by name and health', async () => {
    const res = await cli(['stat', 'out/a.bin']);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.split('\n');
    expect(lines).toContain('health         healthy: all 3 cached morsels have 2 live copies');
    expect(lines).toContain(
      'copies         2 wanted; live per morsel min 2, avg 2; 0 at risk, 0 only at the source',
    );
    expect(lines).toContain('cached         3 MiB (100.0%)');
    expect(lines).toContain('placement      round-robin');
    expect(lines).toContain('donors         2 of 2 live');
    expect(res.stdout).toMatch(/^ {2}donor-1 +live +\d morsels?$/m);
    expect(res.stdout).toMatch(/^ {2}donor-2 +live +\d morsels?$/m);
    expect(res.stdout).not.toMatch(new RegExp(`^ {2}${UUID}`, 'm'));
  });

  it('ls shows live copies of the worst morsel over the copies wanted', async () => {
    const res = await cli(['ls', 'out']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^ready +3 MiB {2}2\/2 +a\.bin$/m);
    expect(res.stdout).toMatch(/^ready +3 MiB {2}1\/1 +one\.bin$/m);
  });

  it.each([
    [
      'a name with a leading slash',
      ['--name', '/abs/x.bin'],
      `error: name "/abs/x.bin" must not start with '/' (paths are relative, like climate/tas.nc) [VALIDATION_FAILED]`,
    ],
    [
      'a name with a ".." segment',
      ['--name', 'a/../x.bin'],
      `error: name "a/../x.bin" must not have '..' as a folder or file name [VALIDATION_FAILED]`,
    ],
  ])('import with %s fails in words', async (_what, args, line) => {
    const res = await cli(['import', web.url, ...args]);
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe(line);
  });

  it('import of https:// from a plain-HTTP port fails in one line', async () => {
    const url = web.url.replace(/^http:/, 'https:');
    const res = await cli(['import', url]);
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe(
      `error: ${url}: the server did not answer TLS (is it plain http://?) (ERR_SSL_WRONG_VERSION_NUMBER) [SOURCE_ERROR]`,
    );
  });

  it('import of file:// says how an admin allows it', async () => {
    const res = await cli(['import', 'file:///etc/hostname']);
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toMatch(
      /^error: file:\/\/ sources are off; an admin allows them by starting the manager and its agents with FREELOADER_ALLOW_FILE_URIS=true .*\[UNSUPPORTED_SCHEME\]$/,
    );
  });

  it('token create keeps every line whole when stdout and stderr share one pipe', async () => {
    const merged = await new Promise<string>((resolve, reject) => {
      // `2>&1` in a shell: both streams are the same pipe, as in `freeloader token create 2>&1 | less`.
      const child = spawn(
        'sh',
        ['-c', `exec "${process.execPath}" "${CLI_MAIN}" token create --note merged 2>&1`],
        { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(out))));
    });
    expect(merged.endsWith('\n')).toBe(true);
    const lines = merged.trimEnd().split('\n');
    expect(lines[0]).toBe('join token (shown once):');
    expect(lines[1]).toMatch(/^flj_[\w-]{20,}::sha256:[0-9a-f]{64}$/);
    expect(lines[2]).toMatch(/^expires \S+; 1 use\(s\)\. Enroll a donor with:$/);
    expect(lines[3]).toMatch(
      new RegExp(`^ {2}freeloader agent --manager \\S+ --token ${lines[1]} `),
    );
    // The token appears only alone on its line or inside the printed command.
    for (const line of lines.slice(2))
      expect(line.replace(/--token flj_\S+/, '')).not.toMatch(/flj_/);
  });

  it('stat says at risk (two copies) or degraded (one copy) once a donor is gone', async () => {
    const gone = c.agents[1]!;
    await gone.stop('SIGKILL');
    await waitForAgentState(c.tm, gone.agentId, 'stale', 30_000);
    const res = await waitFor(
      'stat to report the stale donor',
      async () => {
        const r = await cli(['stat', 'out/a.bin']);
        return r.stdout.includes('donors         1 of 2 live') ? r : undefined;
      },
      30_000,
      200,
    );
    expect(res.stdout).toMatch(
      /^health {9}at risk: 3 of 3 cached morsels have fewer than 2 live copies \(at least 1 each\)$/m,
    );
    expect(res.stdout).toMatch(
      /^copies {9}2 wanted; live per morsel min 1, avg 1; 3 at risk, 0 only at the source$/m,
    );
    expect(res.stdout).toMatch(/^ {2}donor-2 +(stale|dead) +\d morsels?$/m);
    const one = await cli(['stat', 'out/one.bin']);
    expect(one.stdout).toMatch(
      /^health {9}degraded: \d of 3 cached morsels have no live copy \(reads fetch them from the source\)$/m,
    );
    expect((await cli(['ls', 'out'])).stdout).toMatch(/^ready +3 MiB {2}1\/2 +a\.bin$/m);
  });
});
