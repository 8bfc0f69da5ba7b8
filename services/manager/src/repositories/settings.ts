import { createPrivateKey, type KeyObject } from 'node:crypto';
import fp from 'fastify-plugin';
import { generateSigningKeys } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';

/** Read a setting's JSON value, or undefined. */
export async function getSetting<T>(db: Queryable, key: string): Promise<T | undefined> {
  const { rows } = await db.query<{ value: T }>('SELECT value FROM settings WHERE key = $1', [key]);
  return rows[0]?.value;
}

/**
 * Store `value` under `key` unless the key already exists; returns the stored value. The first
 * writer wins, so two managers booting together agree on one value.
 */
export async function putSettingOnce<T>(db: Queryable, key: string, value: T): Promise<T> {
  await db.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [
    key,
    JSON.stringify(value),
  ]);
  return (await getSetting<T>(db, key))!;
}

/** Remove a setting (nothing when there is none). */
export async function deleteSetting(db: Queryable, key: string): Promise<void> {
  await db.query('DELETE FROM settings WHERE key = $1', [key]);
}

export interface SigningKeys {
  privateKey: KeyObject;
  publicKeyPem: string;
}

const SIGNING_KEYS = 'manager_signing_keys';

/** The manager's Ed25519 capability keys: made once, kept in the database across restarts. */
export async function loadSigningKeys(db: Queryable): Promise<SigningKeys> {
  const stored =
    (await getSetting<{ privateKeyPem: string; publicKeyPem: string }>(db, SIGNING_KEYS)) ??
    (await putSettingOnce(db, SIGNING_KEYS, generateSigningKeys()));
  return { privateKey: createPrivateKey(stored.privateKeyPem), publicKeyPem: stored.publicKeyPem };
}

declare module 'fastify' {
  interface FastifyInstance {
    signingKeys: SigningKeys;
  }
}

export default fp(
  async (app) => {
    app.decorate('signingKeys', await loadSigningKeys(app.pg));
  },
  { name: 'signing-keys', dependencies: ['postgres', 'migrations'] },
);

const SOURCE_ALLOW = 'source_allow';

/** The admin's source allow list (hosts and CIDRs; empty when never set). */
export async function getSourceAllow(db: Queryable): Promise<string[]> {
  return (await getSetting<string[]>(db, SOURCE_ALLOW)) ?? [];
}

/** Replace the admin's source allow list (entries already vetted). */
export async function putSourceAllow(db: Queryable, entries: readonly string[]): Promise<void> {
  await db.query(
    `INSERT INTO settings (key, value) VALUES ($1, $2)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
    [SOURCE_ALLOW, JSON.stringify(entries)],
  );
}
