import fp from 'fastify-plugin';
import { EventBus } from './events.js';
import { LivenessSync } from './liveness-sync.js';
import { SoftState } from './soft-state.js';
import { sweepExpiredReservations } from './repositories/reservations.js';

declare module 'fastify' {
  interface FastifyInstance {
    events: EventBus;
    softState: SoftState;
    /** The shared liveness table's writer and reader (several managers, one database). */
    liveness: LivenessSync;
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
 * How long a closing manager waits for its last flush of sightings (milliseconds). preClose
 * hooks run one after the other, so a flush queued behind a backlog of database writes (10,000
 * agents' first heartbeats at load 20: minutes of them) held every later one — the job
 * channel's answer to its held waits included — and the manager was killed 60 s after SIGTERM.
 * Sightings are soft state: what is not written, the agents' next heartbeats tell any manager
 * within one interval.
 */
export const CLOSE_FLUSH_MAX_MS = 2_000;

/**
 * The event bus and soft state, plus their timers: a sweep that announces live/stale/dead
 * changes, and every flush period a batched write of this manager's sightings to the shared
 * liveness table followed by a read of the other managers' (see LivenessSync).
 */
export default fp<SoftStatePluginOptions>(
  async (app, opts) => {
    const { staleAfterMs, deadAfterMs, softStateFlushMs } = app.config;
    const events = new EventBus();
    const softState = new SoftState({ staleAfterMs, deadAfterMs, clock: opts.clock, bus: events });
    app.decorate('events', events);
    app.decorate('softState', softState);

    const liveness = new LivenessSync(app);
    app.decorate('liveness', liveness);
    const flush = (): Promise<void> => liveness.flush();

    if (opts.timers === false) return;
    const sweepEvery = Math.max(50, Math.min(1_000, Math.floor(staleAfterMs / 4)));
    const timers = [
      setInterval(() => softState.sweep(), sweepEvery),
      setInterval(() => void flush().then(() => liveness.refresh()), softStateFlushMs),
    ];
    for (const t of timers) t.unref();
    // Shared rows: one manager of the database marks lapsed reservations.
    app.singletons.start(
      'reservations',
      () => sweepExpiredReservations(app.pg),
      RESERVATION_SWEEP_MS,
      {
        runAtStart: false,
      },
    );
    // A manager starting next to others knows at once which agents they hear from.
    app.addHook('onReady', async () => liveness.refresh());
    // The last flush starts with the stop and is awaited only before the pool ends (onClose
    // hooks run in reverse order of registration, the pool's last): answering the held job
    // waits and draining connections need not wait for it (at 10,000 agents it took its whole
    // 2 s bound, then the waits' answers 2.3 s more).
    let lastFlush: Promise<'done' | 'late'> | undefined;
    app.addHook('preClose', async () => {
      for (const t of timers) clearInterval(t);
      lastFlush = app.closeSteps.bounded('last soft-state flush', flush, CLOSE_FLUSH_MAX_MS);
    });
    app.addHook('onClose', async () => {
      if ((await lastFlush) === 'late') {
        app.log.warn(`last soft-state flush not done in ${CLOSE_FLUSH_MAX_MS} ms; closing anyway`);
      }
    });
  },
  { name: 'soft-state', dependencies: ['agents-repo', 'singletons'] },
);
