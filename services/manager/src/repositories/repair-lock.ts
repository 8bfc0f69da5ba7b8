import type pg from 'pg';
import { LOCK_KEYS } from '../db/lock-keys.js';

/** Advisory lock key of the repair scheduler ('FLRP' as an int: one scheduler per database). */
export const REPAIR_LOCK_KEY = LOCK_KEYS.repair;

/**
 * Try to become the one repair scheduler of this database: a session advisory lock on a
 * connection the caller keeps for as long as it schedules (a second manager on the same
 * database gets false and leaves repair alone). True when held.
 */
export async function tryRepairLock(client: pg.PoolClient): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [
    REPAIR_LOCK_KEY,
  ]);
  return rows[0]?.ok === true;
}

/** Give the lock up (closing the connection does too). */
export async function releaseRepairLock(client: pg.PoolClient): Promise<void> {
  await client.query('SELECT pg_advisory_unlock($1)', [REPAIR_LOCK_KEY]);
}
