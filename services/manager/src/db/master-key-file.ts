// The master key that wraps every dataset key lives in a file beside the manager, not in the
// database: a database dump (a backup, a copy handed to a colleague to debug) alone then opens
// no donor's data. Kept in db/ beside data-key-wrap.ts: repositories import nothing but db/.
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, link, mkdir, open, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { DATA_KEY_BYTES, FreeLoaderError } from '@freeloader/protocol';

/** The key file's mode: the manager's user alone reads it (as ssh insists for its keys). */
export const MASTER_KEY_FILE_MODE = 0o600;

/**
 * Where the master key is: the admin's file, else `$FREELOADER_HOME/manager/master.key`.
 *
 * @example masterKeyPath({ home: '/var/lib/freeloader' }) // '/var/lib/freeloader/manager/master.key'
 */
export function masterKeyPath(config: { home: string; masterKeyFile?: string }): string {
  return config.masterKeyFile ?? join(config.home, 'manager', 'master.key');
}

/**
 * A one-way check value of a master key, for the database: managers compare their key against
 * it (a wrong file is refused at start) without the database ever holding the key. HMAC-SHA256
 * under the key, so the value reveals nothing of it.
 *
 * @example masterKeyCheck(key) // 'hmac-sha256:3f5a…' (64 hex digits)
 */
export function masterKeyCheck(key: Buffer): string {
  const mac = createHmac('sha256', key).update('freeloader master key check v1').digest('hex');
  return `hmac-sha256:${mac}`;
}

/**
 * The key in `path`, or undefined when there is no such file. Refused (MASTER_KEY_MISMATCH)
 * when others may read it or it holds no key: the manager does not start on an unsafe key.
 */
export async function readMasterKeyFile(path: string): Promise<Buffer | undefined> {
  if (!existsSync(path)) return undefined;
  const mode = (await stat(path)).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new FreeLoaderError(
      'MASTER_KEY_MISMATCH',
      `the master key file ${path} is mode ${mode.toString(8)}: others may read it; ` +
        `chmod 600 ${path} (and ask who may have copied it)`,
    );
  }
  const key = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
  if (key.length !== DATA_KEY_BYTES) {
    throw new FreeLoaderError(
      'MASTER_KEY_MISMATCH',
      `the master key file ${path} does not hold a ${DATA_KEY_BYTES}-byte key (base64)`,
    );
  }
  return key;
}

/** Write `key` (base64) to `path`, flushed, mode exactly 0600; `wx` fails on an existing file. */
async function writeKeyFile(path: string, key: Buffer, flag: 'w' | 'wx'): Promise<void> {
  const file = await open(path, flag, MASTER_KEY_FILE_MODE);
  try {
    await file.writeFile(`${key.toString('base64')}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  // open's mode is masked by the umask: make it exactly 0600, as readMasterKeyFile demands.
  await chmod(path, MASTER_KEY_FILE_MODE);
}

/**
 * Write `key` to `path` (mode 0600) unless a key is there already; returns the key the file
 * holds afterwards (another process's, when it won the race). Written to a temporary file,
 * flushed, then hard-linked into place, so the file is never half written and never replaced.
 *
 * @example const key = await writeMasterKeyFileOnce('/home/fl/.freeloader/manager/master.key', randomBytes(32));
 */
export async function writeMasterKeyFileOnce(path: string, key: Buffer): Promise<Buffer> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  // pid and random: test workers are threads of one process, and may race for one file.
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeKeyFile(tmp, key, 'w');
  try {
    await link(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    await unlink(tmp);
  }
  return (await readMasterKeyFile(path))!;
}

/**
 * The marker file beside a key file: how exports were recorded before they were kept in the
 * database (migration 021), and still where `key export` notes one when it cannot reach the
 * database; the manager moves it into the database at its next start (master-key-exports.ts).
 *
 * @example exportedMarkerPath('/home/fl/.freeloader/manager/master.key') // '…/master.key.exported'
 */
export const exportedMarkerPath = (keyPath: string): string => `${keyPath}.exported`;

/**
 * The marker file's line: where and when, never the key.
 *
 * @example exportNote('/media/usb/fl.key') // 'exported 2026-11-27T12:00:00.000Z to /media/usb/fl.key'
 */
export const exportNote = (out: string): string =>
  `exported ${new Date().toISOString()} to ${resolve(out)}`;

/** Write the marker file beside `keyPath` (see {@link exportedMarkerPath}). */
export async function writeExportMarker(keyPath: string, out: string): Promise<void> {
  await writeFile(exportedMarkerPath(keyPath), `${exportNote(out)}\n`, {
    mode: MASTER_KEY_FILE_MODE,
  });
}

/**
 * Copy the master key at `keyPath` to `out` (mode 0600, never over an existing file: a backup
 * overwritten by a wrong key is worse than none); returns the key, for recording the export
 * (recordKeyExport, by the key's check value).
 *
 * @example const key = await exportMasterKey('/home/fl/.freeloader/manager/master.key', '/media/usb/fl-master.key')
 */
export async function exportMasterKey(keyPath: string, out: string): Promise<Buffer> {
  const key = await readMasterKeyFile(keyPath);
  if (!key) {
    throw new FreeLoaderError(
      'NOT_FOUND',
      `there is no master key file at ${keyPath}: the manager creates it at its first start ` +
        '(or pass --master-key-file / --home for the one it uses)',
    );
  }
  try {
    await writeKeyFile(out, key, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    throw new FreeLoaderError('ALREADY_EXISTS', `${out} exists: export to a new file`);
  }
  return key;
}
