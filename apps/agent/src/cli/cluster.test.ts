import type { ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentView, LoginResponse } from '@freeloader/protocol';
import { ManagerClient } from '../manager-client.js';
import { AGENT_NODE_FLAGS } from './agent-node-flags.js';
import {
  exited,
  freePort,
  isRunning,
  pidsMentioning,
  spawnCli,
  waitFor,
} from '../test/processes.js';

/**
 * `freeloader cluster` (what `npm start` runs) as a real process tree: manager, embedded
 * PostgreSQL and agents; Ctrl-C (SIGINT to the whole foreground process group, as a terminal
 * sends it) stops every one of them and exits 0.
 */
describe('freeloader cluster', { timeout: 180_000 }, () => {
  let home = '';
  let cluster: ChildProcess | undefined;

  afterAll(async () => {
    // A failed test must not leave the tree running: ask nicely, then kill what is left.
    if (cluster && isRunning(cluster)) process.kill(-cluster.pid!, 'SIGINT');
    if (cluster) await Promise.race([exited(cluster), new Promise((r) => setTimeout(r, 15_000))]);
    if (home) {
      for (const pid of await pidsMentioning(home)) process.kill(pid, 'SIGKILL');
      await rm(home, { recursive: true, force: true });
    }
  });

  it('runs a manager and 2 live agents, then stops everything on Ctrl-C', async () => {
    home = await mkdtemp(join(tmpdir(), 'fl-cluster-it-'));
    await chmod(home, 0o711);
    const [port, pgPort] = [await freePort(), await freePort()];
    const args = ['cluster', '--agents', '2', '--quota', '64MiB', '--home', home];
    args.push('--port', String(port), '--agent-base-port', '0');
    // Its own process group, which this test then signals like a terminal's Ctrl-C does.
    // Load watching is left to the cluster itself (the test rig's own default is removed).
    cluster = spawnCli(
      args,
      { EMBEDDED_PG_PORT: String(pgPort), LOG_LEVEL: 'warn', FREELOADER_IGNORE_LOAD: undefined },
      { detached: true },
    );
    let stdout = '';
    let stderr = '';
    cluster.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
    cluster.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const started = performance.now();
    await waitFor(
      'the cluster to be up',
      () => {
        if (!isRunning(cluster!)) throw new Error(`cluster exited:\n${stderr}`);
        return /cluster is up/.test(stdout) ? true : undefined;
      },
      60_000,
      100,
    );
    expect(performance.now() - started).toBeLessThan(60_000);

    const url = `http://127.0.0.1:${port}`;
    expect(stdout).toContain(`API docs: ${url}/docs`);
    const health = await fetch(`${url}/api/v1/health`);
    expect(await health.json()).toMatchObject({ ok: true });
    // stdout is a pipe here, not a terminal: the password is only in its 0600 file, named.
    const passwordFile = join(home, 'manager', 'admin-password');
    expect(stdout).toContain(`password in ${passwordFile}`);
    const password = (await readFile(passwordFile, 'utf8')).trim();
    expect(password.length).toBeGreaterThan(8);
    expect(stdout + stderr).not.toContain(password);
    // The demo allows loopback sources, visibly.
    expect(stdout).toMatch(/loopback sources are allowed for the demo/);
    const admin = new ManagerClient(url);
    const session = await admin.request<LoginResponse>('POST', '/auth/login', {
      username: 'admin',
      password,
    });
    admin.setCredentials({ kind: 'user', token: session.token });
    const agents = await admin.request<AgentView[]>('GET', '/agents');
    await admin.close();
    expect(agents.map((a) => [a.name, a.state]).sort()).toEqual([
      ['agent-1', 'live'],
      ['agent-2', 'live'],
    ]);
    // The join token never appears on a command line.
    expect(stderr).not.toMatch(/--token/);
    const agentPids = await pidsMentioning(join(home, 'cluster', 'agent-'));
    expect(agentPids).toHaveLength(2);
    // The agents share this machine and its owner: they must not take one another's load for
    // the owner's, so they run without load watching, and the banner says so.
    expect(stdout).toMatch(/governor: load throttling off, .*do not throttle one another/);
    for (const pid of agentPids) {
      const env = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
      expect(env).toContain('FREELOADER_IGNORE_LOAD=1');
      // Started with the donor's V8 limits (new space capped: docs/memory.md).
      const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      for (const flag of AGENT_NODE_FLAGS) expect(argv).toContain(flag);
    }

    process.kill(-cluster.pid!, 'SIGINT');
    expect(await exited(cluster)).toBe(0);
    expect(stderr).toContain('SIGINT: stopping');
    expect(stderr).not.toMatch(/again: exiting now|exited \(/);
    // Manager, PostgreSQL and agents are gone, not orphaned.
    expect(await pidsMentioning(home)).toEqual([]);
  });
});
