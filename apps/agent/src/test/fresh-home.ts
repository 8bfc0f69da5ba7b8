import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidsMentioning } from './processes.js';

const homes: string[] = [];

/**
 * A new FREELOADER_HOME under the temp directory, searchable by others (the embedded
 * PostgreSQL runs as `postgres` when the tests run as root); {@link removeHomes} removes it.
 *
 * @example const home = await freshHome('fl-stop-manager-');
 */
export async function freshHome(prefix: string): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), prefix));
  await chmod(home, 0o711);
  homes.push(home);
  return home;
}

/** SIGKILL whatever still runs from a fresh home (a manager, its PostgreSQL), then remove it. */
export async function removeHomes(): Promise<void> {
  for (const home of homes.splice(0)) {
    for (const pid of await pidsMentioning(home)) process.kill(pid, 'SIGKILL');
    await rm(home, { recursive: true, force: true });
  }
}
