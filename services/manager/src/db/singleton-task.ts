import pg from 'pg';

/** The part of a logger the singleton machinery uses. */
interface Log {
  warn(obj: object, msg: string): void;
}

/**
 * One dedicated PostgreSQL session per manager that holds its session advisory locks. A lock
 * lives exactly as long as the session: when the manager dies (kill -9 included) the kernel
 * closes its socket, PostgreSQL ends the session and the lock is free for another manager at
 * once. The session is outside the app's pool, so held locks never eat pooled connections.
 *
 * @example
 *   const locks = new LockSession(databaseUrl);
 *   if (await locks.hold(0x464c4444)) { ... only this manager gets here ... }
 *   await locks.close();
 */
export class LockSession {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly held = new Set<number>();
  private closed = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly connectionString: string) {}

  /**
   * True when this session holds `key` now: taken if free, and when already held the session is
   * checked with a round trip, since a session that died silently holds nothing any more.
   * False (never a throw) when another session holds it or the database cannot be reached.
   */
  hold(key: number): Promise<boolean> {
    // One query at a time on the session: tasks of one manager ask at the same moments.
    const turn = this.queue.then(() => this.holdNow(key));
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  private async holdNow(key: number): Promise<boolean> {
    if (this.closed) return false;
    let client: pg.Client | undefined;
    try {
      client = await this.session();
      if (this.held.has(key)) {
        await client.query('SELECT 1');
        return true;
      }
      const { rows } = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock($1) AS ok',
        [key],
      );
      if (rows[0]?.ok === true) this.held.add(key);
      return this.held.has(key);
    } catch {
      if (client) this.drop(client);
      return false;
    }
  }

  /** Whether `key` was held at the last check (no round trip). */
  holds(key: number): boolean {
    return this.held.has(key);
  }

  /** Give `key` up so another manager may take it. */
  async release(key: number): Promise<void> {
    const turn = this.queue.then(async () => {
      if (!this.held.delete(key) || !this.client) return;
      await this.client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
    });
    this.queue = turn;
    await turn;
  }

  /** End the session: every lock it held is released. */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.held.clear();
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async session(): Promise<pg.Client> {
    if (this.client) return this.client;
    this.connecting ??= (async () => {
      const client = new pg.Client({
        connectionString: this.connectionString,
        keepAlive: true,
        application_name: 'freeloader-manager-locks',
      });
      // A broken session has lost its locks: forget them; the next hold() reconnects.
      client.on('error', () => this.drop(client));
      client.on('end', () => this.drop(client));
      try {
        await client.connect();
      } catch (e) {
        await client.end().catch(() => undefined);
        throw e;
      }
      if (this.closed) {
        await client.end().catch(() => undefined);
        throw new Error('lock session closed');
      }
      this.client = client;
      return client;
    })().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.held.clear();
    void client.end().catch(() => undefined);
  }
}

/** A periodic task that runs on one manager at a time. */
export interface SingletonTask {
  /** Ticks this manager ran (while holding the lock). */
  readonly runs: number;
  /** Try to run now (e.g. an event made work likely) instead of at the next period. */
  poke(): void;
  /** Stop the timer, wait for a running tick, and give the lock up. */
  stop(): Promise<void>;
}

/**
 * Run `tick` every `periodMs` on whichever manager holds advisory lock `lockKey`, and on no
 * other: each period every manager tries the lock; the holder keeps it and runs the tick, the
 * others skip. When the holder dies its session ends and another manager takes the lock at its
 * next try, so takeover takes at most one period after PostgreSQL noticed the death (at once
 * for a killed process, whose socket the kernel closes). Ticks never overlap; errors are
 * logged and the next period tries again.
 *
 * @example
 *   const task = runAsSingleton(locks, LOCK_KEYS.jobLeases, () => sweeper.sweep(), 5_000, {
 *     name: 'job lease sweep', log: app.log,
 *   });
 *   await task.stop();
 */
export function runAsSingleton(
  locks: LockSession,
  lockKey: number,
  tick: () => Promise<unknown>,
  periodMs: number,
  opts: { name: string; log: Log; runAtStart?: boolean },
): SingletonTask {
  let runs = 0;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const attempt = (): void => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      if (!(await locks.hold(lockKey)) || stopped) return;
      runs++;
      await tick();
    })()
      .catch((err: unknown) => opts.log.warn({ err, task: opts.name }, 'periodic task failed'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          attempt();
        }
      });
  };

  const timer = setInterval(attempt, periodMs);
  timer.unref();
  if (opts.runAtStart !== false) attempt();
  return {
    get runs() {
      return runs;
    },
    poke: attempt,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await locks.release(lockKey);
    },
  };
}
