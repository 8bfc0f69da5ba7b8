/**
 * `@freeloader/manager/testing`: what other packages' tests need from the manager beyond its
 * public API, so the public index carries no database internals. Production-safe (built into
 * dist, which the agent's tests and e2e load at run time): it re-exports production modules and
 * a port finder, and imports nothing test-only (no vitest).
 */
export { freePort } from './testing/free-port.js';
export { setPlacement } from './repositories/placement.js';
export type { NewDataset } from './repositories/namespace.js';
export { createScratchDatabase, type ScratchDatabase } from './db/scratch-database.js';
export { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './db/embedded.js';
export { parsePrometheusText, type MetricFamily } from './testing/prometheus-text.js';
export { procInfo } from './db/stale-postmaster.js';
export { systemPostgres } from './db/system-postgres.js';
