import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'scripts',
    include: ['*.test.ts'],
    // An upper bound for a busy 2-core CI machine (load average 10+), not a target: the tests
    // run real (small) builds.
    testTimeout: 60_000,
  },
});
