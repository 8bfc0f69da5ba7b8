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
 * reason to look now) and poked by revocations and finished jobs.
 */
export default fp<RepairPluginOptions>(
  async (app, opts) => {
    const scheduler = new RepairScheduler(app);
    app.decorate('repair', scheduler);
    const off = app.donorLoss.register('repair', () => scheduler.poke());
    const unsubscribe = app.events.subscribe((e) => {
      if (e.type === 'agent' && e.state === 'revoked') scheduler.poke();
      // A finished job frees its destination and sources: hand them the next units now rather
      // than at the next tick (REPAIR_TICK_MS idle per job otherwise slowed repair below its caps).
      // A job done committed its units, so the queue stands and only dispatch runs; a failed
      // one left units to requeue, which takes a full pass.
      if (e.type === 'transfer' && e.state === 'done') scheduler.poke(false);
      if (e.type === 'transfer' && e.state === 'failed') scheduler.poke();
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
