import { randomBytes } from 'node:crypto';
import fp from 'fastify-plugin';
import { DATA_KEY_BYTES } from '@freeloader/protocol';
import { unwrapDataKey, wrapDataKey } from '../db/data-key-wrap.js';
import type { Queryable } from '../db/pool.js';
import { getSetting, putSettingOnce } from './settings.js';

const MASTER_KEY = 'manager_master_key';

/**
 * The manager's master key, which wraps every dataset key: made once and kept like the
 * capability signing key (a settings row; the first of two booting managers wins).
 */
export async function loadMasterKey(db: Queryable): Promise<Buffer> {
  const stored =
    (await getSetting<string>(db, MASTER_KEY)) ??
    (await putSettingOnce(db, MASTER_KEY, randomBytes(DATA_KEY_BYTES).toString('base64')));
  return Buffer.from(stored, 'base64');
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
    app.decorate('dataKeys', createDataKeys(app.pg, await loadMasterKey(app.pg)));
  },
  { name: 'data-keys', dependencies: ['postgres', 'migrations'] },
);
