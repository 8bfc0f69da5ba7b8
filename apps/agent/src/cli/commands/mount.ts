import { resolve } from 'node:path';
import type { Command } from 'commander';
import { FreeLoaderError } from '@freeloader/protocol';
import { FS_TYPE, mountAt, probeDir, unmountDir } from '../../mount/mount-point.js';
import { mountAdapterFor } from '../../mount/platforms.js';
import { startMount } from '../../mount/start-mount.js';
import { reportFailure, reportReady, runInBackground } from '../background.js';
import { defaultManagerUrl } from '../paths.js';
import { runUntilSignal } from '../run-until-signal.js';
import { userClient } from '../session.js';

interface MountCliOptions {
  manager: string;
  allowOther?: boolean;
  cacheMb: string;
  readaheadMb?: string;
  kernelReadaheadKb?: string;
  timeout: string;
  drain: string;
  worker: boolean;
  daemon?: boolean;
  log?: string;
}

/** How long `mount --daemon` waits for the background mount to answer (milliseconds). */
const DAEMON_READY_TIMEOUT_MS = 120_000;

/**
 * `freeloader mount <dir>`: the namespace as a read-only file system until Ctrl-C, SIGTERM or
 * `freeloader unmount <dir>`.
 */
export function registerMount(program: Command): void {
  program
    .command('mount <dir>')
    .description(
      'mount the namespace read-only at <dir>: folders as directories, datasets as files',
    )
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option(
      '--allow-other',
      'let other users read the mount (non-root: user_allow_other in /etc/fuse.conf)',
    )
    .option('--cache-mb <MiB>', 'memory for cached and in-flight morsels', '256')
    .option(
      '--readahead-mb <MiB>',
      'most prefetched ahead of one sequential reader (default W·(S+1) morsels, at least 16)',
    )
    .option(
      '--timeout <seconds>',
      'longest any file operation waits before it fails with EIO',
      '30',
    )
    .option(
      '--drain <seconds>',
      'on stop, how long files still open are served after detaching',
      '10',
    )
    .option(
      '--kernel-readahead-kb <KiB>',
      "raise the kernel's read-ahead for the mount (root only; default: the kernel's 128 KiB)",
    )
    .option('--no-worker', 'fetch morsels on the thread that answers the kernel (for comparison)')
    .option(
      '--daemon',
      'run in the background; exit once the mount answers (non-zero with the error if it fails)',
    )
    .option('--log <file>', "with --daemon: append the mount's messages to this file")
    .action(async (dir: string, opts: MountCliOptions) => {
      // Say what to install before asking anyone to sign in.
      const why = mountAdapterFor().unavailable();
      if (why) throw new FreeLoaderError('UNAVAILABLE', why);
      if (opts.daemon) {
        const { pid, line } = await runInBackground(DAEMON_READY_TIMEOUT_MS, opts.log);
        console.error(`${line} (in the background, pid ${pid})`);
        return;
      }
      try {
        await mountInForeground(dir, opts);
      } catch (e) {
        reportFailure(e);
        throw e;
      }
      // Files a lazy unmount left open are not served past the drain time.
      process.exit(process.exitCode ?? 0);
    });
}

/** Mount and serve until a signal or an unmount; says "mounted" only once the mount answers. */
async function mountInForeground(dir: string, opts: MountCliOptions): Promise<void> {
  const client = await userClient(opts.manager);
  const log = (m: string): void => console.error(`mount: ${m}`);
  try {
    const m = await startMount({
      manager: client,
      dir,
      allowOther: opts.allowOther === true,
      cacheMb: positive(opts.cacheMb, '--cache-mb'),
      ...(opts.readaheadMb
        ? { readAheadMb: positive(opts.readaheadMb, '--readahead-mb', true) }
        : {}),
      opTimeoutMs: positive(opts.timeout, '--timeout') * 1000,
      ...(opts.kernelReadaheadKb
        ? {
            kernelReadAheadKb: Math.ceil(positive(opts.kernelReadaheadKb, '--kernel-readahead-kb')),
          }
        : {}),
      worker: opts.worker,
      log,
    });
    if (m.clearedStale)
      log(`cleared a stale mount at ${m.dir} (transport endpoint is not connected)`);
    const drainMs = positive(opts.drain, '--drain', true) * 1000;
    // Handlers before the ready line: a signal sent the moment it shows must stop cleanly.
    const signalled = runUntilSignal(() => m.stop(drainMs)).then(() => 'signal' as const);
    const mounted = `mounted ${client.baseUrl} at ${m.dir} (read-only)`;
    console.error(`${mounted}; Ctrl-C or \`freeloader unmount ${m.dir}\` stops it`);
    reportReady(`${mounted}; \`freeloader unmount ${m.dir}\` stops it`);
    const how = await Promise.race([signalled, m.mounted.ended.then(() => 'unmounted' as const)]);
    if (how === 'unmounted') await m.stop(drainMs);
    console.error(`unmounted ${m.dir}`);
  } finally {
    await client.close();
  }
}

/** `freeloader unmount <dir>`: ends a mount (its process exits cleanly) or clears a stale one. */
export function registerUnmount(program: Command): void {
  program
    .command('unmount <dir>')
    .alias('umount')
    .description(
      'unmount a FreeLoader mount; with files open it is detached and goes when they close',
    )
    .option('--no-lazy', 'fail instead of detaching when files are open')
    .action(async (dir: string, opts: { lazy: boolean }) => {
      const abs = resolve(dir);
      const stale = (await probeDir(abs)) === 'stale';
      const entry = await mountAt(abs);
      if (!entry) throw new FreeLoaderError('NOT_FOUND', `nothing is mounted at ${abs}`);
      if (entry.fsType !== FS_TYPE && !stale) {
        throw new FreeLoaderError(
          'CONFLICT',
          `${abs} is a ${entry.fsType} mount, not FreeLoader's`,
        );
      }
      const how = await unmountDir(abs, { lazy: opts.lazy });
      console.error(
        how === 'now'
          ? `unmounted ${abs}${stale ? ' (it was stale)' : ''}`
          : `${abs} detached: it goes away when the last open file there is closed`,
      );
    });
}

function positive(text: string, name: string, zeroOk = false): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || (!zeroOk && n === 0)) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `${name} must be a positive number, not "${text}"`,
    );
  }
  return n;
}
