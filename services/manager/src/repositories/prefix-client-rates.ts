import type { ClientRateView } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import { iso } from './rows.js';

/**
 * Fold one read rate into `client`'s decaying average (`client_rates`) with weight `alpha`.
 *
 * @example await foldClientRate(pool, 'alice', 80e6, 0.3)
 */
export async function foldClientRate(
  db: Queryable,
  client: string,
  rate: number,
  alpha: number,
): Promise<void> {
  await db.query(
    `INSERT INTO client_rates (client, rate) VALUES ($1, $2)
     ON CONFLICT (client) DO UPDATE SET
       rate = $3::float8 * $2::float8 + (1 - $3::float8) * client_rates.rate,
       samples = client_rates.samples + 1, updated_at = now()`,
    [client, rate, alpha],
  );
}

/** The stored rates of the named clients (those that have one). */
export async function clientRatesOf(
  db: Queryable,
  clients: readonly string[],
): Promise<{ client: string; rate: number }[]> {
  const { rows } = await db.query<{ client: string; rate: number }>(
    `SELECT client, rate FROM client_rates WHERE client = ANY($1::text[])`,
    [clients],
  );
  return rows;
}

/** Every client's rate, by client. */
export async function listClientRates(db: Queryable): Promise<ClientRateView[]> {
  const { rows } = await db.query<{
    client: string;
    rate: number;
    samples: number;
    updated_at: Date;
  }>('SELECT client, rate, samples, updated_at FROM client_rates ORDER BY client');
  return rows.map((r) => ({
    client: r.client,
    rate: r.rate,
    samples: r.samples,
    updatedAt: iso(r.updated_at),
  }));
}
