import type pg from 'pg';
import type { ClientRateView, RateReport } from '@freeloader/protocol';
import { iso } from '../repositories/rows.js';
import { SOURCE_DECAY_ALPHA } from './source-registry.js';

/** R_client assumed before any client has read anything (bytes/s): a 1 Gbit/s workstation. */
export const DEFAULT_CLIENT_RATE = 100e6;

/**
 * A client's in-cache read rate from one rate report: the donors were read in parallel, so the
 * read took about as long as the busiest donor was busy, and the client received the sum.
 * Null when the report carries no delivery.
 *
 * @example clientRateOf({ samples: [{bytes: 50, seconds: 1}, {bytes: 30, seconds: 0.5}] }) // → 80
 */
export function clientRateOf(report: Pick<RateReport, 'samples'>): number | null {
  const bytes = report.samples.reduce((s, x) => s + x.bytes, 0);
  const seconds = Math.max(0, ...report.samples.map((x) => x.seconds));
  return bytes > 0 && seconds > 0 ? bytes / seconds : null;
}

/** R_client per principal and for all clients together (''), as decaying averages. */
export function createClientRates(pool: pg.Pool) {
  return {
    /** Fold one read's rate into the client's and the aggregate average. */
    async record(client: string, rate: number): Promise<void> {
      if (!(rate > 0) || !Number.isFinite(rate)) return;
      for (const who of new Set([client, ''])) {
        await pool.query(
          `INSERT INTO client_rates (client, rate) VALUES ($1, $2)
           ON CONFLICT (client) DO UPDATE SET
             rate = $3::float8 * $2::float8 + (1 - $3::float8) * client_rates.rate,
             samples = client_rates.samples + 1, updated_at = now()`,
          [who, rate, SOURCE_DECAY_ALPHA],
        );
      }
    },

    /** The client's R_client, else every client's, else {@link DEFAULT_CLIENT_RATE}. */
    async rateOf(client?: string): Promise<number> {
      const { rows } = await pool.query<{ client: string; rate: number }>(
        `SELECT client, rate FROM client_rates WHERE client = ANY($1::text[])`,
        [[client ?? '', '']],
      );
      const own = rows.find((r) => r.client === client);
      return own?.rate ?? rows.find((r) => r.client === '')?.rate ?? DEFAULT_CLIENT_RATE;
    },

    async list(): Promise<ClientRateView[]> {
      const { rows } = await pool.query<{
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
    },
  };
}
export type ClientRates = ReturnType<typeof createClientRates>;
