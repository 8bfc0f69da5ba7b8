import type pg from 'pg';
import type { Queryable } from '../db/pool.js';

/** The NOTIFY channel the managers of one database share. */
export const EVENTS_CHANNEL = 'freeloader_events';

/** Send `payload` to every manager listening on the database (delivered at commit). */
export async function notifyEvent(db: Queryable, payload: string): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, payload]);
}

/** Make `client`'s session receive the events channel's notifications. */
export async function listenEvents(client: pg.Client): Promise<void> {
  await client.query(`LISTEN ${EVENTS_CHANNEL}`);
}
