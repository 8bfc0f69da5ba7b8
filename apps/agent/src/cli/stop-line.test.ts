import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { freshHome, removeHomes } from '../test/fresh-home.js';
import { exited, freePort, isRunning, spawnCli, waitFor } from '../test/processes.js';

afterAll(removeHomes);

/** Spawn, collect stderr and stdout, and wait until `ready` shows in either. */
async function startUntil(args: string[], env: NodeJS.ProcessEnv, ready: RegExp) {
  const child = spawnCli(args, { LOG_LEVEL: 'warn', ...env }, { detached: true });
  const out = { stderr: '', stdout: '' };
  child.stderr!.on('data', (b: Buffer) => (out.stderr += b.toString()));
  child.stdout!.on('data', (b: Buffer) => (out.stdout += b.toString()));
  await waitFor(
    `${args[0]} to be ready`,
    () => {
      if (!isRunning(child)) throw new Error(`${args[0]} exited:\n${out.stderr}`);
      return ready.test(out.stdout + out.stderr) ? true : undefined;
    },
    90_000,
    100,
  );
  return { child, out };
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);

/** A daemon that stops says so last, so a terminal or a log shows the stop finished. */
describe('the last line after a clean stop', { timeout: 180_000 }, () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('freeloader manager on %s', async (signal) => {
    const home = await freshHome('fl-stop-manager-');
    const { child, out } = await startUntil(
      ['manager', '--listen', '127.0.0.1:0', '--home', home],
      { EMBEDDED_PG_PORT: String(await freePort()) },
      /^manager: http/m,
    );
    child.kill(signal);
    expect(await exited(child), out.stderr).toBe(0);
    expect(lastLine(out.stderr)).toBe('manager stopped');
  });

  it('freeloader cluster on Ctrl-C', async () => {
    const home = await freshHome('fl-stop-cluster-');
    const args = ['cluster', '--agents', '1', '--quota', '64MiB', '--home', home];
    args.push('--port', String(await freePort()), '--agent-base-port', '0');
    let cluster: ChildProcess | undefined;
    try {
      const started = await startUntil(
        args,
        { EMBEDDED_PG_PORT: String(await freePort()) },
        /cluster is up/,
      );
      cluster = started.child;
      // As a terminal's Ctrl-C: SIGINT to the whole process group.
      process.kill(-cluster.pid!, 'SIGINT');
      expect(await exited(cluster), started.out.stderr).toBe(0);
      expect(started.out.stderr).toContain('[manager] manager stopped');
      expect(lastLine(started.out.stderr)).toBe('cluster stopped (manager and 1 agent)');
    } finally {
      if (cluster && isRunning(cluster)) process.kill(-cluster.pid!, 'SIGKILL');
    }
  });
});
