import type { Queryable } from '../db/pool.js';

/** A decaying delivery rate from `donor_rates`: per client, or over all clients (`''`). */
export interface ObservedRateRow {
  agent_id: string;
  client: string;
  rate: number;
}

/** A donor's join-time probe as stored on its agents row. */
export interface ProbeRow {
  id: string;
  disk_read_rate: number | null;
  disk_read_cached: boolean | null;
  download_rate: number | null;
  upload_rate: number | null;
  diagnosed_at: Date | null;
}

/** Rates observed from `ids` to `client` and to all clients, with at least one sample. */
export async function observedRates(
  db: Queryable,
  ids: readonly string[],
  client: string,
): Promise<ObservedRateRow[]> {
  const { rows } = await db.query<ObservedRateRow>(
    `SELECT agent_id, client, rate FROM donor_rates
       WHERE agent_id = ANY($1::uuid[]) AND client IN ($2, '') AND samples > 0 AND rate > 0`,
    [ids, client],
  );
  return rows;
}

/** The stored probes of those of `ids` that were ever diagnosed. */
export async function storedProbes(db: Queryable, ids: readonly string[]): Promise<ProbeRow[]> {
  const { rows } = await db.query<ProbeRow>(
    `SELECT id, disk_read_rate, disk_read_cached, download_rate, upload_rate, diagnosed_at
       FROM agents WHERE id = ANY($1::uuid[]) AND diagnosed_at IS NOT NULL`,
    [ids],
  );
  return rows;
}
