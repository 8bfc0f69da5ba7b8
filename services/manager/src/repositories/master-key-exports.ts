import { existsSync } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg from 'pg';
import {
  exportedMarkerPath,
  exportMasterKey,
  masterKeyCheck,
  writeExportMarker,
} from '../db/master-key-file.js';
import type { Queryable } from '../db/pool.js';

/**
 * Has a master key been backed up? A fact of the key (issue 17 leftovers), kept in PostgreSQL
 * by the key's one-way check value (migration 021), not in a file beside one manager's copy:
 * with several managers on one database each stopped warning only once its own copy had been
 * exported, and a key file restored from its backup came back without its marker.
 */

/** How long `key export` waits for the database before noting the export beside the key. */
export const EXPORT_DB_CONNECT_MS = 5_000;

/**
 * Record that `key` was exported to `to` (now, or at `at`); a later export replaces the
 * note. `firstOnly`: keep an existing note (a marker file moved in after a newer export).
 *
 * @example await recordKeyExport(pool, key, '/media/usb/fl-master.key');
 */
export async function recordKeyExport(
  db: Queryable,
  key: Buffer,
  to: string,
  opts: { at?: Date; firstOnly?: boolean } = {},
): Promise<void> {
  await db.query(
    `INSERT INTO master_key_exports (key_check, exported_at, exported_to)
     VALUES ($1, coalesce($2, now()), $3)
     ON CONFLICT (key_check) DO ${
       opts.firstOnly
         ? 'NOTHING'
         : 'UPDATE SET exported_at = EXCLUDED.exported_at, exported_to = EXCLUDED.exported_to'
     }`,
    [masterKeyCheck(key), opts.at ?? null, to],
  );
}

/** Has `key` ever been exported (by any manager of this database, from any copy)? */
export async function keyExported(db: Queryable, key: Buffer): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM master_key_exports WHERE key_check = $1', [
    masterKeyCheck(key),
  ]);
  return (rowCount ?? 0) > 0;
}

/**
 * Move a marker file beside `keyPath` (from before migration 021, or written by an export that
 * could not reach the database) into the database for `key`, then delete the file; true when
 * there was one. The file says `exported <ISO time> to <path>`.
 */
export async function adoptExportMarker(
  db: Queryable,
  keyPath: string,
  key: Buffer,
): Promise<boolean> {
  const file = exportedMarkerPath(keyPath);
  if (!existsSync(file)) return false;
  const text = (await readFile(file, 'utf8')).trim();
  const parsed = /^exported (\S+) to (.+)$/.exec(text);
  const at = parsed ? new Date(parsed[1]!) : undefined;
  await recordKeyExport(db, key, parsed?.[2] ?? text, {
    ...(at && !Number.isNaN(at.getTime()) ? { at } : {}),
    firstOnly: true,
  });
  await unlink(file);
  return true;
}

/**
 * The URL of the embedded PostgreSQL a manager with home `home` is running now (its port from
 * the server's postmaster.pid, its password from the file beside the data), or undefined when
 * none is running there.
 */
export async function runningEmbeddedUrl(home: string): Promise<string | undefined> {
  const dir = join(home, 'manager');
  const pid = await readFile(join(dir, 'pgdata', 'postmaster.pid'), 'utf8').catch(() => '');
  // postmaster.pid: pid, data directory, start time, port, … (one a line).
  const port = Number.parseInt(pid.split('\n')[3] ?? '', 10);
  const password = (await readFile(join(dir, 'pg-password'), 'utf8').catch(() => '')).trim();
  if (!Number.isInteger(port) || port <= 0 || !password) return undefined;
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/freeloader`;
}

/** Where an export was recorded: the database, or (unreachable) a marker file beside the key. */
export type ExportRecord = { recordedIn: 'database' } | { recordedIn: 'file'; why: string };

/**
 * `freeloader manager key export`: copy the key at `keyPath` to `out` (exportMasterKey), then
 * record the export in the database at `databaseUrl` (else the embedded one of a manager
 * running with `home`). When no database answers, the export is noted in a marker file beside
 * the key, which that manager moves into the database at its next start.
 *
 * @example await exportAndRecord({ keyPath, out: '/media/usb/fl.key', home: '/var/lib/freeloader' })
 */
export async function exportAndRecord(opts: {
  keyPath: string;
  out: string;
  home: string;
  databaseUrl?: string;
}): Promise<ExportRecord> {
  const key = await exportMasterKey(opts.keyPath, opts.out);
  const to = resolve(opts.out);
  const url = opts.databaseUrl ?? (await runningEmbeddedUrl(opts.home));
  let why = `no database: no DATABASE_URL and no manager running with home ${opts.home}`;
  if (url) {
    const client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: EXPORT_DB_CONNECT_MS,
    });
    try {
      await client.connect();
      await recordKeyExport(client, key, to);
      return { recordedIn: 'database' };
    } catch (e) {
      why = `the database did not take it (${e instanceof Error ? e.message : String(e)})`;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  await writeExportMarker(opts.keyPath, opts.out);
  return { recordedIn: 'file', why };
}
