import fp from 'fastify-plugin';
import { HistorySampler } from './sampler.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The periodic sampler of donor and import history (PostgreSQL, bounded). */
    history: HistorySampler;
  }
}

/**
 * Seconds between history samples: `FREELOADER_HISTORY_SAMPLE_S` (tests use fractions),
 * default 30.
 */
export function sampleIntervalS(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.FREELOADER_HISTORY_SAMPLE_S);
  return Number.isFinite(v) && v >= 0.1 && v <= 3600 ? v : 30;
}

/** Start the sampler (unless timers are off, as in unit tests that sample by hand). */
export default fp<{ timers?: boolean }>(
  async (app, opts) => {
    const sampler = new HistorySampler(app, sampleIntervalS());
    app.decorate('history', sampler);
    if (opts.timers !== false) {
      // Samples are shared rows: one manager of the database takes them at a time.
      app.singletons.start('history', () => sampler.sampleNow(), sampler.intervalS * 1000);
    }
    app.addHook('onClose', async () => {
      await sampler.idle();
    });
  },
  { name: 'history', dependencies: ['postgres', 'soft-state', 'singletons'] },
);
