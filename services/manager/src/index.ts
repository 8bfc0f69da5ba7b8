export { buildApp, type BuildOptions } from './app.js';
export { createUser, ensureFirstAdmin, adminPasswordFile } from './bootstrap.js';
export { ConfigSchema, loadConfig, type Config } from './config.js';
export { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './db/embedded.js';
export { exportMasterKey, masterKeyPath } from './db/master-key-file.js';
export { exportAndRecord, type ExportRecord } from './repositories/master-key-exports.js';
export { EventBus } from './events.js';
export { SoftState, type Liveness } from './soft-state.js';
export { startManager, type RunningManager } from './start.js';
// Database internals other packages' tests arrange state with are in `./testing.ts`.
