import { exec, execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoginResponse } from '@freeloader/protocol';
import type { TestManager } from '../test/cluster-harness.js';
import { exited, isRunning, spawnCli, waitFor } from '../test/processes.js';
import { mountAt } from './mount-point.js';

/** Tests need the FUSE device; everything else (libfuse, the addon) must be there or they fail. */
export const HAS_FUSE = existsSync('/dev/fuse');

export interface MountProcess {
  child: ChildProcess;
  dir: string;
  stderr(): string;
  /** Signal it and resolve with its exit code (null when a signal ended it). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Its exit code once it exits by itself; rejects after `timeoutMs`. */
  exited(timeoutMs?: number): Promise<number | null>;
}

/** A session token for the CLI, as `freeloader login` would save it. */
export async function loginToken(tm: TestManager): Promise<string> {
  const res = await fetch(`${tm.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: tm.adminPassword }),
  });
  return ((await res.json()) as LoginResponse).token;
}

/** `freeloader mount <dir>` as a real process; resolves once it says it is mounted. */
export async function spawnMount(
  tm: TestManager,
  token: string,
  dir: string,
  extraArgs: readonly string[] = [],
): Promise<MountProcess> {
  const child = spawnCli(['mount', dir, '--manager', tm.url, ...extraArgs], {
    FREELOADER_TOKEN: token,
  });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  child.stdout!.resume();
  await waitFor(
    `the mount at ${dir}`,
    () => {
      if (!isRunning(child)) throw new Error(`mount exited early:\n${stderr}`);
      return /^mounted /m.test(stderr) ? true : undefined;
    },
    60_000,
    20,
  );
  return {
    child,
    dir,
    stderr: () => stderr,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (isRunning(child)) child.kill(signal);
      return exited(child);
    },
    exited: (timeoutMs = 15_000) =>
      Promise.race([
        exited(child),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`mount still running:\n${stderr}`)), timeoutMs),
        ),
      ]),
  };
}

export interface ShResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Run a shell command without blocking this process (the manager under test lives here).
 * Times out (SIGKILL) rather than hanging a test.
 */
export function sh(command: string, timeoutMs = 30_000): Promise<ShResult> {
  return new Promise((resolve) => {
    exec(
      command,
      { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 << 20, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Run `node -e script ...args` (a reader in its own process); resolves with its output. */
export function nodeScript(script: string, args: string[], timeoutMs = 60_000): Promise<ShResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-e', script, ...args],
      { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 << 20, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A temp root for mount points; `cleanup` force-unmounts anything left there and removes it. */
export async function mountRoot(): Promise<{
  root: string;
  cleanup: () => Promise<void>;
}> {
  const root = await mkdtemp(join(tmpdir(), 'fl-mount-'));
  return {
    root,
    async cleanup() {
      for (const dir of [join(root, 'a'), join(root, 'b'), join(root, 'c')]) {
        if (await mountAt(dir)) {
          await sh(`fusermount -u -z '${dir}' || umount -l '${dir}'`, 10_000);
        }
      }
      await rm(root, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}
