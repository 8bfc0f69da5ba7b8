import type { ClientRateView, RateReport } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';
import {
  clientRatesOf,
  foldClientRate,
  listClientRates,
} from '../repositories/prefix-client-rates.js';
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

/**
 * A client's R_client, else every client's (''), else {@link DEFAULT_CLIENT_RATE}.
 *
 * @example await clientRate(pool, 'alice') // → 100e6 before anyone read
 */
export async function clientRate(db: Queryable, client?: string): Promise<number> {
  const rows = await clientRatesOf(db, [client ?? '', '']);
  const own = rows.find((r) => r.client === client);
  return own?.rate ?? rows.find((r) => r.client === '')?.rate ?? DEFAULT_CLIENT_RATE;
}

/** R_client per principal and for all clients together (''), as decaying averages. */
export function createClientRates(db: Queryable) {
  return {
    /** Fold one read's rate into the client's and the aggregate average. */
    async record(client: string, rate: number): Promise<void> {
      if (!(rate > 0) || !Number.isFinite(rate)) return;
      for (const who of new Set([client, ''])) {
        await foldClientRate(db, who, rate, SOURCE_DECAY_ALPHA);
      }
    },

    /** The client's R_client, else every client's, else {@link DEFAULT_CLIENT_RATE}. */
    rateOf: (client?: string): Promise<number> => clientRate(db, client),

    list: (): Promise<ClientRateView[]> => listClientRates(db),
  };
}
export type ClientRates = ReturnType<typeof createClientRates>;
