import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../db/embedded.js';
import { freePort } from '../testing/free-port.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the project's embedded PostgreSQL (its `freeloader` database). */
    pgAdminUrl: string;
  }
}

/** Start one embedded PostgreSQL for every manager test file; stop it and delete its data after. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'fl-manager-test-'));
  // The server may run as the `postgres` user, which must be able to reach its data dir.
  await chmod(dir, 0o711);
  const pg = await startEmbeddedPostgres({
    dataDir: join(dir, 'pgdata'),
    port: await freePort(),
    ownedRoot: dir,
  });
  project.provide('pgAdminUrl', pg.url);
  return async () => {
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
