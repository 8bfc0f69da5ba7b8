import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'agent',
    include: ['src/**/*.test.ts', 'electron/**/*.test.ts'],
    // Upper bounds, not targets: at load average 10-15 on 2 cores, tests that write a few MiB
    // through real processes took 5-7 s (vitest's default limit is 5 s). Cluster tests that
    // need longer say so themselves.
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
