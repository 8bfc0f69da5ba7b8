import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { FreeLoaderError } from '@freeloader/protocol';

export interface MountEntry {
  /** The file system's device, `major:minor` (its backing device's name in /sys/class/bdi). */
  device: string;
  mountPoint: string;
  fsType: string;
  source: string;
}

/** The file-system type FreeLoader mounts show in /proc/self/mountinfo and `mount`. */
export const FS_TYPE = 'fuse.freeloader';

/**
 * Parse /proc/self/mountinfo (proc(5)): the device is field 3, the mount point field 5, then
 * optional fields up to `-`, then type and source. Octal escapes (`\040` for a space) are decoded.
 *
 * @example parseMountInfo('36 35 98:0 / /mnt/x rw - fuse.freeloader freeloader rw')
 *   // [{ device: '98:0', mountPoint: '/mnt/x', fsType: 'fuse.freeloader', source: 'freeloader' }]
 */
export function parseMountInfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-', 6);
    if (fields.length < 10 || dash < 0) continue;
    out.push({
      device: fields[2]!,
      mountPoint: unescapeOctal(fields[4]!),
      fsType: unescapeOctal(fields[dash + 1] ?? ''),
      source: unescapeOctal(fields[dash + 2] ?? ''),
    });
  }
  return out;
}

function unescapeOctal(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The mount at exactly `dir` (the last one, when mounts are stacked), if any. */
export async function mountAt(dir: string): Promise<MountEntry | undefined> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  return parseMountInfo(text)
    .filter((m) => m.mountPoint === dir)
    .pop();
}

/** What `stat` says about a mount point: fine, gone, or a FUSE mount whose server died. */
export async function probeDir(dir: string): Promise<'dir' | 'missing' | 'stale' | 'not-dir'> {
  try {
    return (await stat(dir)).isDirectory() ? 'dir' : 'not-dir';
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTCONN' || code === 'ECONNABORTED') return 'stale';
    if (code === 'ENOENT') return 'missing';
    throw e;
  }
}

/**
 * Unmount `dir`: `fusermount -u` (no root needed), falling back to `umount`. When the mount is
 * busy (a file open) and `lazy` is set, detach it now and let it go when the last reader closes.
 * Resolves with how it went; throws when it could not unmount at all.
 */
export async function unmountDir(
  dir: string,
  opts: { lazy?: boolean } = {},
): Promise<'now' | 'lazy'> {
  const errors: string[] = [];
  const attempts: [string, string[], 'now' | 'lazy'][] = [
    ['fusermount', ['-u', dir], 'now'],
    ['umount', [dir], 'now'],
    ...(opts.lazy
      ? ([
          ['fusermount', ['-u', '-z', dir], 'lazy'],
          ['umount', ['-l', dir], 'lazy'],
        ] as [string, string[], 'lazy'][])
      : []),
  ];
  if (process.platform === 'darwin') attempts.splice(0, 1);
  for (const [cmd, args, how] of attempts) {
    const err = await run(cmd, args);
    if (err === undefined) return how;
    errors.push(`${cmd} ${args.join(' ')}: ${err}`);
  }
  const busy = errors.some((e) => /busy/i.test(e));
  throw new FreeLoaderError(
    busy ? 'CONFLICT' : 'INTERNAL',
    busy
      ? `${dir} is busy (a file is open there); close it, or unmount lazily`
      : `could not unmount ${dir}:\n  ${errors.join('\n  ')}`,
  );
}

/**
 * Make `dir` ready to mount on: created when missing; a stale FreeLoader mount left by a crash
 * ("transport endpoint is not connected") is cleared; a live mount or a non-empty folder is
 * refused with what to do. Returns the absolute path and whether a stale mount was cleared.
 */
export async function prepareMountPoint(dir: string): Promise<{ dir: string; cleared: boolean }> {
  const abs = resolve(dir);
  let cleared = false;
  let state = await probeDir(abs);
  if (state === 'stale') {
    await unmountDir(abs, { lazy: true });
    cleared = true;
    state = await probeDir(abs);
  }
  if (state === 'missing') {
    await mkdir(abs, { recursive: true });
    state = 'dir';
  }
  if (state !== 'dir') throw new FreeLoaderError('CONFLICT', `${abs} is not a directory`);
  const mounted = await mountAt(abs);
  if (mounted?.fsType === FS_TYPE) {
    throw new FreeLoaderError(
      'ALREADY_EXISTS',
      `FreeLoader is already mounted at ${abs}: run \`freeloader unmount ${abs}\` first`,
    );
  }
  if ((await readdir(abs)).length > 0) {
    throw new FreeLoaderError('CONFLICT', `${abs} is not empty: mount on an empty folder`);
  }
  return { dir: abs, cleared };
}

/** Run a command; resolves with undefined on success, else with its error text. */
function run(cmd: string, args: string[], timeoutMs = 15_000): Promise<string | undefined> {
  return new Promise((done) => {
    execFile(cmd, args, { timeout: timeoutMs }, (err, _stdout, stderr) => {
      if (!err) return done(undefined);
      done((String(stderr).trim() || err.message).split('\n')[0]);
    });
  });
}
