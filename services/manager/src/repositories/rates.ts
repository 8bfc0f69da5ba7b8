import fp from 'fastify-plugin';
import type pg from 'pg';
import type { DonorRateView, RateReport } from '@freeloader/protocol';

/** Weight of a new sample in the decaying average: recent behaviour matters most. */
export const RATE_DECAY_ALPHA = 0.3;

/** Donor delivery rates as clients observe them (decaying averages per donor and donor-client). */
export function createRatesRepo(pool: pg.Pool) {
  return {
    async record(client: string, report: RateReport): Promise<void> {
      const rows = [
        ...report.samples.map((s) => ({ agent: s.agentId, rate: s.bytes / s.seconds, failed: 0 })),
        ...report.failures.map((f) => ({ agent: f.donor, rate: null, failed: 1 })),
      ];
      for (const scope of [client, '']) {
        for (const r of rows) {
          await pool.query(
            `INSERT INTO donor_rates (agent_id, client, rate, samples, failures)
             SELECT $1::uuid, $2::text, coalesce($3::float8, 0),
                    CASE WHEN $3::float8 IS NULL THEN 0 ELSE 1 END, $4::int
             WHERE EXISTS (SELECT 1 FROM agents WHERE id = $1::uuid)
             ON CONFLICT (agent_id, client) DO UPDATE SET
               rate = CASE WHEN $3::float8 IS NULL THEN donor_rates.rate
                           WHEN donor_rates.samples = 0 THEN $3::float8
                           ELSE $5::float8 * $3::float8 + (1 - $5::float8) * donor_rates.rate END,
               samples = donor_rates.samples + CASE WHEN $3::float8 IS NULL THEN 0 ELSE 1 END,
               failures = donor_rates.failures + $4::int,
               updated_at = now()`,
            [r.agent, scope, r.rate, r.failed, RATE_DECAY_ALPHA],
          );
        }
      }
    },

    /** Aggregate rates (all clients) of every donor with history. */
    async all(): Promise<DonorRateView[]> {
      const { rows } = await pool.query<{
        agent_id: string;
        rate: number;
        samples: number;
        failures: number;
      }>(
        `SELECT agent_id, rate, samples, failures FROM donor_rates WHERE client = '' ORDER BY agent_id`,
      );
      return rows.map((r) => ({
        agentId: r.agent_id,
        rate: r.rate,
        samples: r.samples,
        failures: r.failures,
      }));
    },
  };
}
export type RatesRepo = ReturnType<typeof createRatesRepo>;

declare module 'fastify' {
  interface FastifyInstance {
    ratesRepo: RatesRepo;
  }
}

export default fp(
  async (app) => {
    app.decorate('ratesRepo', createRatesRepo(app.pg));
  },
  { name: 'rates-repo', dependencies: ['postgres'] },
);
