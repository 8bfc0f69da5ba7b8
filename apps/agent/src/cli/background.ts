import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { FreeLoaderError, isFreeLoaderError, type ErrorCode } from '@freeloader/protocol';

/** Set in the environment of a command started by {@link runInBackground}. */
const BACKGROUND_ENV = 'FREELOADER_BACKGROUND_CHILD';

/** What the background child tells its parent over the IPC channel. */
type ChildMessage = { ready: string } | { error: string; code?: string };

/**
 * `--daemon`: run this same command again without `--daemon`, detached in its own session, and
 * return only once it reports ready (with its ready line) — or fail with its error when it
 * does not get there. Its output goes to `logFile`, else nowhere.
 *
 * @example
 *   // freeloader mount --daemon /mnt/fl  →  exits 0 once /mnt/fl answers, the mount runs on
 *   const { pid, line } = await runInBackground(120_000);
 */
export async function runInBackground(
  readyTimeoutMs: number,
  logFile?: string,
): Promise<{ pid: number; line: string }> {
  const args = process.argv.slice(1).filter((a) => a !== '--daemon');
  const out = logFile ? openSync(logFile, 'a') : 'ignore';
  const child = spawn(process.execPath, [...process.execArgv, ...args], {
    detached: true,
    stdio: ['ignore', out, out, 'ipc'],
    env: { ...process.env, [BACKGROUND_ENV]: '1' },
  });
  try {
    const msg = await new Promise<ChildMessage>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new FreeLoaderError('TIMEOUT', `not ready after ${readyTimeoutMs / 1000} s`)),
        readyTimeoutMs,
      );
      child.once('message', (m: ChildMessage) => {
        clearTimeout(timer);
        resolve(m);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new FreeLoaderError(
            'INTERNAL',
            `the background process exited (${signal ?? code}) before it was ready` +
              (logFile ? `; see ${logFile}` : ''),
          ),
        );
      });
    });
    if ('error' in msg) {
      throw new FreeLoaderError((msg.code ?? 'INTERNAL') as ErrorCode, msg.error);
    }
    // Let it go: no channel, no reference, so this process can exit and it runs on.
    child.disconnect();
    child.unref();
    return { pid: child.pid!, line: msg.ready };
  } catch (e) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    throw e;
  }
}

/** In a background child: tell the waiting parent it is ready (a no-op in the foreground). */
export function reportReady(line: string): void {
  if (process.env[BACKGROUND_ENV] && process.send) process.send({ ready: line });
}

/** In a background child: hand the parent the error it should print (a no-op otherwise). */
export function reportFailure(e: unknown): void {
  if (!process.env[BACKGROUND_ENV] || !process.send || !process.connected) return;
  const msg: ChildMessage = isFreeLoaderError(e)
    ? { error: e.message, code: e.code }
    : { error: e instanceof Error ? e.message : String(e) };
  process.send(msg);
}
