import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The master key file every in-process test manager shares (their databases are scratch, so
 * one key for all is harmless; two managers a test runs on one database must share it anyway).
 * Under the temp directory, not the tests' `/nonexistent` home, which must stay nonexistent.
 *
 * @example loadConfig({}, { databaseUrl, home: '/nonexistent', masterKeyFile: TEST_MASTER_KEY_FILE })
 */
export const TEST_MASTER_KEY_FILE = join(
  tmpdir(),
  `freeloader-test-master-${process.getuid?.() ?? 0}.key`,
);
