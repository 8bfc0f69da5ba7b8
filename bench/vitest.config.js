import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineProject } from 'vitest/config';

// Unit tests of the benchmark harness's pure parts and the availability simulator (no root, no
// namespaces): a project of the root vitest config, so `npm test` runs them.
export default defineProject({
  root: dirname(fileURLToPath(import.meta.url)),
  test: {
    name: 'bench',
    include: ['lib/**/*.test.js'],
    // An upper bound for a busy 2-core CI machine, not a target: one seeded simulator run took
    // 3.6 s at load average 20-30, close to vitest's default limit of 5 s (which every other
    // project already raises).
    testTimeout: 60_000,
  },
});
