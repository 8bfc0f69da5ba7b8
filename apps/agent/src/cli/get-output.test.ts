import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoginResponse } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { exited, spawnCli } from '../test/processes.js';
import { killSpawned, runCli, waitFor, waitForAgentState } from '../test/cluster-harness.js';
import { OutputFile } from './output-file.js';

describe('OutputFile', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fl-output-file-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('writes beside the target and renames on commit', async () => {
    const target = join(dir, 'a.bin');
    const out = await OutputFile.open(target);
    expect(out.tempPath).toMatch(/\/\.a\.bin\.freeloader-[0-9a-f]{12}\.part$/);
    await out.handle.write(Buffer.from('hello'));
    expect(await readdir(dir)).toEqual([expect.stringMatching(/^\.a\.bin\..*\.part$/)]);
    await out.commit();
    await out.discard(); // after commit: nothing to do
    expect(await readFile(target, 'utf8')).toBe('hello');
    expect(await readdir(dir)).toEqual(['a.bin']);
  });

  it('discard removes the temp file and leaves an existing target untouched', async () => {
    const target = join(dir, 'keep.bin');
    await writeFile(target, 'old');
    const out = await OutputFile.open(target);
    await out.handle.truncate(1 << 20);
    await out.discard();
    expect(await readFile(target, 'utf8')).toBe('old');
    expect((await readdir(dir)).filter((n) => n.includes('keep'))).toEqual(['keep.bin']);
  });

  it('writes straight into a target that is not a regular file (/dev/null)', async () => {
    const out = await OutputFile.open('/dev/null');
    expect(out.tempPath).toBeNull();
    await out.handle.write(Buffer.from('x'));
    await out.commit();
  });
});

/** `get -o FILE` against a real cluster: FILE appears whole or not at all. */
describe('freeloader get -o FILE', { timeout: 180_000 }, () => {
  let c: DataCluster;
  let web: TestServer;
  let env: NodeJS.ProcessEnv;
  let dir = '';

  beforeAll(async () => {
    c = await startDataCluster(2, '64MiB');
    web = await startTestServer({ size: 3 * 1024 * 1024 + 5 });
    dir = await mkdtemp(join(tmpdir(), 'fl-get-out-'));
    const login = await c.tm.admin.request<LoginResponse>('POST', '/auth/login', {
      username: 'admin',
      password: c.tm.adminPassword,
    });
    env = { FREELOADER_TOKEN: login.token, FREELOADER_MANAGER: c.tm.url };
    const d = await c.importAndWait({ uri: web.url, name: 'g/data.bin', width: 2 });
    expect(d.state).toBe('ready');
  }, 180_000);
  afterAll(async () => {
    await killSpawned();
    await web?.close();
    await c?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const leftovers = async () => (await readdir(dir)).filter((n) => n.endsWith('.part'));

  it('a whole read lands at FILE, replacing what was there, with no temp file left', async () => {
    const target = join(dir, 'whole.bin');
    await writeFile(target, 'old contents');
    const res = await runCli(['get', 'g/data.bin', '-o', target], env, 120_000);
    expect(res.code, res.stderr).toBe(0);
    expect((await readFile(target)).equals(web.content)).toBe(true);
    expect(await leftovers()).toEqual([]);
  });

  it('a get that fails before any byte leaves no FILE', async () => {
    const target = join(dir, 'missing.bin');
    const res = await runCli(['get', 'g/no-such.bin', '-o', target], env, 60_000);
    expect(res.code).toBe(1);
    expect(await readdir(dir)).not.toContain('missing.bin');
    expect(await leftovers()).toEqual([]);
  });

  it('a get killed with SIGTERM mid-read leaves no FILE and no temp file', async () => {
    // Donors frozen and the source trickling: the read is surely still going when it is killed.
    for (const a of c.agents) a.child.kill('SIGSTOP');
    web.set({ bytesPerSecond: 20_000 });
    try {
      const target = join(dir, 'killed.bin');
      const child = spawnCli(['get', 'g/data.bin', '-o', target], env);
      child.stdout!.resume();
      let stderr = '';
      child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      // The read has started once its output exists (the temp file; FILE itself before the fix).
      await waitFor(
        'the output file',
        async () => ((await readdir(dir)).some((n) => n.includes('killed.bin')) ? true : undefined),
        60_000,
      );
      child.kill('SIGTERM');
      const code = await exited(child);
      expect(await readdir(dir)).not.toContain('killed.bin');
      expect(await leftovers()).toEqual([]);
      expect(code, stderr).toBe(143);
    } finally {
      web.set({ bytesPerSecond: 0 });
      for (const a of c.agents) a.child.kill('SIGCONT');
    }
    await Promise.all(c.agents.map((a) => waitForAgentState(c.tm, a.agentId, 'live', 60_000)));
  });

  it('a get that fails midway (donors and source gone) leaves an existing FILE untouched', async () => {
    const fresh = join(dir, 'fresh.bin');
    const existing = join(dir, 'existing.bin');
    await writeFile(existing, 'keep me');
    for (const a of c.agents) await a.stop('SIGKILL');
    await web.close();
    for (const target of [fresh, existing]) {
      const res = await runCli(['get', 'g/data.bin', '-o', target], env, 150_000);
      expect(res.code, res.stdout).toBe(1);
      expect(res.stderr).toMatch(/^error: /m);
    }
    expect(await readdir(dir)).not.toContain('fresh.bin');
    expect(await readFile(existing, 'utf8')).toBe('keep me');
    expect(await leftovers()).toEqual([]);
  });
});
