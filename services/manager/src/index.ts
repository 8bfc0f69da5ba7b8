export { buildApp, type BuildOptions } from './app.js';
export { createUser, ensureFirstAdmin, adminPasswordFile } from './bootstrap.js';
export { ConfigSchema, loadConfig, type Config } from './config.js';
export { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './db/embedded.js';
export { migrate, MIGRATIONS_DIR } from './db/migrate.js';
export { createPool, withTransaction, type Queryable } from './db/pool.js';
export { deleteDataset, onJobFinished } from './dataset-lifecycle.js';
export { EventBus } from './events.js';
export { enqueueJob, type NewJob } from './repositories/jobs.js';
export { type NewDataset } from './repositories/namespace.js';
export {
  getHashes,
  getPlacement,
  HASHES_PER_CHUNK,
  holdingsOf,
  putHashes,
  putMorselHashes,
  setPlacement,
} from './repositories/placement.js';
export { SoftState, type Liveness } from './soft-state.js';
export { startManager, type RunningManager } from './start.js';
