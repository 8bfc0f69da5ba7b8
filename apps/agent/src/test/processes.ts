import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/**
 * The CLI the tests run as real processes, as a user runs it: the launcher npm links, which runs
 * the bundled CLI once `npm run build` made it (`npm test` does), the tsc output after a bare
 * `npx tsc -b` (the bundle is then older than tsc's last emit and left alone).
 */
export const CLI_MAIN = fileURLToPath(new URL('../../bin/freeloader.js', import.meta.url));

/**
 * The inherited environment minus FreeLoader's own variables, so a developer's session, token
 * or home never leaks into a test; FREELOADER_HOME points nowhere unless a test sets it.
 */
function baseEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('FREELOADER_')),
  );
  // Test agents share a busy machine with everything else: its load is not theirs to yield to.
  return {
    ...env,
    FREELOADER_HOME: '/nonexistent/freeloader-test-home',
    FREELOADER_IGNORE_LOAD: '1',
  };
}

/** Every process a test spawned and has not seen exit; {@link killSpawned} ends them. */
const spawned = new Set<ChildProcess>();

/**
 * Spawn `node <built CLI> ...args` and remember it so {@link killSpawned} can end it even when a
 * test fails half-way. stdout and stderr are pipes.
 */
export function spawnCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  opts: { detached?: boolean } = {},
): ChildProcess {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...baseEnv(), ...env },
    detached: opts.detached ?? false,
  });
  spawned.add(child);
  child.once('exit', () => spawned.delete(child));
  return child;
}

/** True while the process has neither exited nor been reaped after a signal. */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Resolve with the exit code (null after a signal) once `child` has exited. */
export function exited(child: ChildProcess): Promise<number | null> {
  if (!isRunning(child)) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** SIGKILL every process spawned by this test file that is still running (for `afterAll`). */
export async function killSpawned(): Promise<void> {
  const live = [...spawned].filter(isRunning);
  for (const child of live) child.kill('SIGKILL');
  await Promise.all(live.map(exited));
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run one CLI command to completion.
 *
 * @example const { code, stdout } = await runCli(['ls', '--manager', url], { FREELOADER_TOKEN: t });
 */
export async function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  // Node's start-up alone took 2-4 s at load average 10+ on 2 cores: an upper bound, not a target.
  timeoutMs = 90_000,
): Promise<CliResult> {
  const child = spawnCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  // 'close' (not 'exit'): every byte of both pipes has been read by then.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** The one port finder (the manager's test entry), re-exported for the agent's tests. */
export { freePort } from '@freeloader/manager/testing';

/**
 * Poll `probe` until it returns a value other than undefined; throws with `what` after
 * `timeoutMs`.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  // An upper bound for a busy machine (load average 10+ on 2 cores), not a target: the wait
  // ends as soon as the condition holds.
  timeoutMs = 60_000,
  everyMs = 50,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Pids of the processes whose command line contains `text` (e.g. a test's unique temp dir), from
 * /proc: how a test finds the grandchildren a supervisor started (agents, PostgreSQL).
 */
export async function pidsMentioning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.replaceAll('\0', ' ').includes(text)) pids.push(Number(entry));
  }
  return pids;
}
