import fp from 'fastify-plugin';
import { LOCK_KEYS, type LockName } from '../db/lock-keys.js';
import { LockSession, runAsSingleton, type SingletonTask } from '../db/singleton-task.js';

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
      await Promise.all([...tasks.values()].map((t) => t.stop()));
    });
    app.addHook('onClose', async () => locks.close());
  },
  { name: 'singletons', dependencies: ['postgres'] },
);
