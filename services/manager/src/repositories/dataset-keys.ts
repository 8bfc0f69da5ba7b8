import { randomBytes } from 'node:crypto';
import fp from 'fastify-plugin';
import { DATA_KEY_BYTES, FreeLoaderError } from '@freeloader/protocol';
import { unwrapDataKey, wrapDataKey } from '../db/data-key-wrap.js';
import {
  masterKeyCheck,
  masterKeyPath,
  readMasterKeyFile,
  writeMasterKeyFileOnce,
} from '../db/master-key-file.js';
import type { Queryable } from '../db/pool.js';
import { adoptExportMarker, keyExported } from './master-key-exports.js';
import { deleteSetting, getSetting, putSettingOnce } from './settings.js';

/** Where migration 017 kept the master key, in the database; moved out to the file at start. */
const LEGACY_MASTER_KEY = 'manager_master_key';
/** The one-way check value of the master key the database's dataset keys are wrapped with. */
const MASTER_KEY_CHECK = 'manager_master_key_check';

/** Some dataset's wrapped key, to try a master key on (none: nothing is encrypted yet). */
async function someWrappedKey(db: Queryable): Promise<{ id: string; wrapped: Buffer } | null> {
  const { rows } = await db.query<{ id: string; wrapped_key: Buffer }>(
    'SELECT id, wrapped_key FROM datasets WHERE wrapped_key IS NOT NULL LIMIT 1',
  );
  return rows[0] ? { id: rows[0].id, wrapped: rows[0].wrapped_key } : null;
}

function opens(key: Buffer, sample: { id: string; wrapped: Buffer }): boolean {
  try {
    unwrapDataKey(key, sample.id, sample.wrapped);
    return true;
  } catch {
    return false;
  }
}

/** The refusal to start, naming the file to copy. */
function refuse(path: string, why: string): FreeLoaderError {
  return new FreeLoaderError(
    'MASTER_KEY_MISMATCH',
    `${why}: copy the master key file of a manager already running on this database to ${path} ` +
      '(mode 0600), or point FREELOADER_MASTER_KEY_FILE at that copy, then start again',
  );
}

/**
 * The manager's master key, which wraps every dataset key, from its file (`path`, see
 * masterKeyPath): created at the first start of the first manager of a database; moved out of
 * the database when an older manager kept it there (the settings row is deleted once the file
 * holds it). The database keeps only a one-way check value, so a manager with another key file
 * (a second manager given none, or the wrong one) refuses to start instead of wrapping new keys
 * the others cannot open.
 *
 * @example const master = await loadMasterKey(pool, '/var/lib/freeloader/manager/master.key');
 */
export async function loadMasterKey(db: Queryable, path: string): Promise<Buffer> {
  let key = await readMasterKeyFile(path);
  const legacy = await getSetting<string>(db, LEGACY_MASTER_KEY);
  if (legacy !== undefined) {
    const old = Buffer.from(legacy, 'base64');
    if (key && !key.equals(old)) {
      throw new FreeLoaderError(
        'MASTER_KEY_MISMATCH',
        `${path} holds another master key than the one this database still keeps in its ` +
          `settings (from before keys moved out): move ${path} aside and start again to move ` +
          "the database's key into it",
      );
    }
    key = await writeMasterKeyFileOnce(path, old);
    if (!key.equals(old)) throw refuse(path, `${path} appeared with another key meanwhile`);
  }
  const check = await getSetting<string>(db, MASTER_KEY_CHECK);
  if (!key) {
    if (check !== undefined || (await someWrappedKey(db))) {
      throw refuse(
        path,
        `there is no master key file at ${path}, and this database's dataset keys are wrapped ` +
          "with another manager's key",
      );
    }
    key = await writeMasterKeyFileOnce(path, randomBytes(DATA_KEY_BYTES));
  }
  const mine = masterKeyCheck(key);
  const sample = await someWrappedKey(db);
  if (
    (await putSettingOnce(db, MASTER_KEY_CHECK, mine)) !== mine ||
    (sample && !opens(key, sample))
  ) {
    throw refuse(
      path,
      `the master key in ${path} is not the one this database's dataset keys are wrapped with`,
    );
  }
  // Only now, with the file written and checked: a crash before leaves the row to move again.
  if (legacy !== undefined) await deleteSetting(db, LEGACY_MASTER_KEY);
  return key;
}

/**
 * Give a dataset a new random data key (a new import: one key per generation of its bytes) and
 * store it wrapped; returns the key.
 */
export async function newDataKey(
  db: Queryable,
  master: Buffer,
  datasetId: string,
): Promise<Buffer> {
  const key = randomBytes(DATA_KEY_BYTES);
  await db.query('UPDATE datasets SET wrapped_key = $2 WHERE id = $1', [
    datasetId,
    wrapDataKey(master, datasetId, key),
  ]);
  return key;
}

/** A dataset's data key, or undefined when it is stored in clear (or does not exist). */
export async function dataKeyOf(
  db: Queryable,
  master: Buffer,
  datasetId: string,
): Promise<Buffer | undefined> {
  const { rows } = await db.query<{ wrapped_key: Buffer | null }>(
    'SELECT wrapped_key FROM datasets WHERE id = $1',
    [datasetId],
  );
  const wrapped = rows[0]?.wrapped_key;
  return wrapped ? unwrapDataKey(master, datasetId, wrapped) : undefined;
}

/**
 * Whether a dataset is stored encrypted (it has a wrapped key); no unwrapping.
 *
 * @example await isEncrypted(pg, id) // → false for an `encrypt: false` import
 */
export async function isEncrypted(db: Queryable, datasetId: string): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM datasets WHERE id = $1 AND wrapped_key IS NOT NULL',
    [datasetId],
  );
  return rows.length > 0;
}

/** The data-key helpers bound to the pool and the master key, as `app.dataKeys`. */
export function createDataKeys(db: Queryable, master: Buffer) {
  return {
    create: (datasetId: string) => newDataKey(db, master, datasetId),
    get: (datasetId: string) => dataKeyOf(db, master, datasetId),
  };
}
export type DataKeys = ReturnType<typeof createDataKeys>;

declare module 'fastify' {
  interface FastifyInstance {
    dataKeys: DataKeys;
  }
}

export default fp(
  async (app) => {
    const path = masterKeyPath(app.config);
    const master = await loadMasterKey(app.pg, path);
    // A marker file beside the key (older managers, or an export that found no database) is
    // moved into the database, where every manager of it sees it.
    await adoptExportMarker(app.pg, path, master);
    // Once a start, without the key: a lost key file is every encrypted dataset lost.
    if (!(await keyExported(app.pg, master))) {
      app.log.warn(
        { keyFile: path },
        `the master key has never been backed up: if ${path} is lost, every encrypted dataset ` +
          'is unreadable; run `freeloader manager key export --out FILE` and keep FILE safe',
      );
    }
    app.decorate('dataKeys', createDataKeys(app.pg, master));
  },
  { name: 'data-keys', dependencies: ['config', 'postgres', 'migrations'] },
);
