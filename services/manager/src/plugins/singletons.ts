import fp from 'fastify-plugin';
import { Gauge } from 'prom-client';
import { LOCK_KEYS, type LockName } from '../db/lock-keys.js';
import { LockSession, runAsSingleton, type SingletonTask } from '../db/singleton-task.js';

/**
 * How long a stopping manager waits for a periodic task's running tick (ms). At 10,000 agents
 * on a busy machine a tick's queries queued behind the pool's backlog and the stop waited for it
 * for more than 70 s. A tick is the database's periodic work, each step its own transaction: one
 * cut short is done again by the next holder of its lock (the lock goes with the session, ended
 * at close).
 */
export const TASK_STOP_MAX_MS = 2_000;

/** This manager's share of the database's periodic work. */
export interface Singletons {
  /** The session holding this manager's advisory locks. */
  locks: LockSession;
  /**
   * Start `tick` every `periodMs` on one manager of the database at a time (see
   * {@link runAsSingleton}); stopped when the app closes.
   */
  start(
    name: LockName,
    tick: () => Promise<unknown>,
    periodMs: number,
    opts?: { runAtStart?: boolean },
  ): SingletonTask;
  /** The tasks started on this manager, by name (tests and metrics count their runs). */
  readonly tasks: ReadonlyMap<LockName, SingletonTask>;
}

declare module 'fastify' {
  interface FastifyInstance {
    singletons: Singletons;
  }
}

/**
 * One advisory-lock session per manager and the periodic tasks that run under its locks, so
 * any number of managers can share one PostgreSQL with each periodic job done once.
 */
export default fp(
  async (app) => {
    const locks = new LockSession(app.config.databaseUrl!);
    const tasks = new Map<LockName, SingletonTask>();
    const atReady: SingletonTask[] = [];
    // Which manager does what, for operators: runs here, and whether this one holds the lock.
    new Gauge({
      name: 'freeloader_periodic_task_runs',
      help: 'Runs of each periodic task on this manager since it started (one manager per database runs each)',
      labelNames: ['task'] as const,
      registers: [app.metrics],
      collect() {
        for (const [name, task] of tasks) this.set({ task: name }, task.runs);
      },
    });
    new Gauge({
      name: 'freeloader_periodic_task_held',
      help: "1 when this manager holds the periodic task's advisory lock, else 0",
      labelNames: ['task'] as const,
      registers: [app.metrics],
      collect() {
        for (const name of tasks.keys())
          this.set({ task: name }, locks.holds(LOCK_KEYS[name]) ? 1 : 0);
      },
    });
    app.decorate('singletons', {
      locks,
      tasks,
      start(name, tick, periodMs, opts) {
        // The first run waits for the app to be ready (onReady below), as every tick may use
        // any decoration.
        const task = runAsSingleton(locks, LOCK_KEYS[name], tick, periodMs, {
          name,
          log: app.log,
          runAtStart: false,
        });
        if (opts?.runAtStart !== false) atReady.push(task);
        tasks.set(name, task);
        return task;
      },
    } satisfies Singletons);
    app.addHook('onReady', async () => {
      for (const task of atReady.splice(0)) task.poke();
    });
    app.addHook('preClose', async () => {
      const stop = async ([name, task]: [LockName, SingletonTask]): Promise<LockName[]> => {
        const step = `periodic task ${name} stopped`;
        const outcome = await app.closeSteps.bounded(step, () => task.stop(), TASK_STOP_MAX_MS);
        return outcome === 'late' ? [name] : [];
      };
      const late = await Promise.all([...tasks].map(stop));
      if (late.flat().length > 0) {
        app.log.warn(
          { tasks: late.flat() },
          `periodic tasks still running ${TASK_STOP_MAX_MS} ms into the stop; closing without them`,
        );
      }
    });
    app.addHook('onClose', async () =>
      app.closeSteps.time('advisory locks released', () => locks.close()),
    );
  },
  { name: 'singletons', dependencies: ['postgres', 'metrics'] },
);
