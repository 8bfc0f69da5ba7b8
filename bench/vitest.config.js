import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineProject } from 'vitest/config';

// Unit tests of the benchmark harness's pure parts and the availability simulator (no root, no
// namespaces): a project of the root vitest config, so `npm test` runs them.
export default defineProject({
  root: dirname(fileURLToPath(import.meta.url)),
  test: { name: 'bench', include: ['lib/**/*.test.js'] },
});
