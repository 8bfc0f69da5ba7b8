import { startCluster } from './cluster.js';

/** Size of the dataset the suite imports: 24 morsels of 1 MiB, 8 per donor. */
export const DATASET_BYTES = 24 * 1048576;

/**
 * Start the cluster once for the suite and hand its addresses to the tests by environment
 * (workers start after this and inherit it). Returns the teardown.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const started = Date.now();
  const cluster = await startCluster({ agents: 3, sizeBytes: DATASET_BYTES });
  process.env.FL_E2E_URL = cluster.manager.url;
  process.env.FL_E2E_PASSWORD = cluster.adminPassword;
  process.env.FL_E2E_SOURCE = cluster.source.url;
  process.env.FL_E2E_ETAG = cluster.source.etag;
  console.log(
    `e2e: cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s at ${cluster.manager.url}`,
  );
  return () => cluster.stop();
}
