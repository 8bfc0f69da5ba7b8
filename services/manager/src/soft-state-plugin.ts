import fp from 'fastify-plugin';
import { EventBus } from './events.js';
import { SoftState } from './soft-state.js';
import { sweepExpiredReservations } from './repositories/reservations.js';

declare module 'fastify' {
  interface FastifyInstance {
    events: EventBus;
    softState: SoftState;
  }
}

export interface SoftStatePluginOptions {
  /** Monotonic clock for liveness (tests inject one); `performance.now()` by default. */
  clock?: () => number;
  /** Run the periodic sweep and flush timers (tests drive them by hand). Default true. */
  timers?: boolean;
}

/** How often lapsed reservations are marked expired (milliseconds). */
const RESERVATION_SWEEP_MS = 60_000;

/**
 * The event bus and soft state, plus their timers: a sweep that announces live/stale/dead
 * changes, and a batched flush of last-seen and heartbeat numbers to the agents table.
 */
export default fp<SoftStatePluginOptions>(
  async (app, opts) => {
    const { staleAfterMs, deadAfterMs, softStateFlushMs } = app.config;
    const events = new EventBus();
    const softState = new SoftState({ staleAfterMs, deadAfterMs, clock: opts.clock, bus: events });
    app.decorate('events', events);
    app.decorate('softState', softState);

    const flush = async (): Promise<void> => {
      const rows = softState.takeDirty();
      try {
        await app.agentsRepo.flushSoftState(rows);
      } catch (err) {
        softState.markDirty(rows);
        app.log.warn({ err }, 'soft-state flush failed; will retry');
      }
    };

    if (opts.timers === false) return;
    const sweepEvery = Math.max(50, Math.min(1_000, Math.floor(staleAfterMs / 4)));
    const timers = [
      setInterval(() => softState.sweep(), sweepEvery),
      setInterval(() => void flush(), softStateFlushMs),
      setInterval(() => {
        sweepExpiredReservations(app.pg).catch((err: unknown) =>
          app.log.warn({ err }, 'reservation sweep failed'),
        );
      }, RESERVATION_SWEEP_MS),
    ];
    for (const t of timers) t.unref();
    app.addHook('preClose', async () => {
      for (const t of timers) clearInterval(t);
      await flush();
    });
  },
  { name: 'soft-state', dependencies: ['agents-repo'] },
);
