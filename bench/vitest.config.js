import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineProject } from 'vitest/config';

// Unit tests of the benchmark harness's pure parts (no root, no namespaces): run with
// `npx vitest run --config bench/vitest.config.js`, or add 'bench' to the root projects.
export default defineProject({
  root: dirname(fileURLToPath(import.meta.url)),
  test: { name: 'bench', include: ['lib/**/*.test.js'] },
});
