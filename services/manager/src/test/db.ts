import { inject } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from '../db/scratch-database.js';

export type TestDatabase = ScratchDatabase;

/**
 * A fresh, empty database on a PostgreSQL server (the project's embedded one by default), so
 * test files never see each other's rows. Dropped with FORCE, which ends stray connections.
 */
export function createTestDatabase(adminUrl: string = inject('pgAdminUrl')): Promise<TestDatabase> {
  return createScratchDatabase(adminUrl);
}
