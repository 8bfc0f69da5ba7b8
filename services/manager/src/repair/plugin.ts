import fp from 'fastify-plugin';
import { RepairScheduler } from './scheduler.js';

declare module 'fastify' {
  interface FastifyInstance {
    repair: RepairScheduler;
  }
}

export interface RepairPluginOptions {
  /** Run the scheduler's timer (tests drive ticks by hand). Default true. */
  timers?: boolean;
}

/**
 * The repair scheduler, started with the app: registered on the donor-loss hook (a death is a
 * reason to look now) and poked by revocations.
 */
export default fp<RepairPluginOptions>(
  async (app, opts) => {
    const scheduler = new RepairScheduler(app);
    app.decorate('repair', scheduler);
    const off = app.donorLoss.register('repair', () => scheduler.poke());
    const unsubscribe = app.events.subscribe((e) => {
      if (e.type === 'agent' && e.state === 'revoked') scheduler.poke();
    });
    if (opts.timers !== false) app.addHook('onReady', async () => scheduler.start());
    app.addHook('preClose', async () => {
      off();
      unsubscribe();
      await scheduler.stop();
    });
  },
  { name: 'repair', dependencies: ['donor-loss', 'soft-state', 'postgres'] },
);
